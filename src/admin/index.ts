// The admin area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { bootstrap } from './bootstrap.js';
export {
  checkKeyOptions,
  createApiKey,
  createTenant,
  findApiKey,
  getTenant,
  type KeyOptions,
  listApiKeys,
  listTenants,
  markKeyUsed,
  revokeApiKey,
  toApiKey,
} from './repository.js';
export { adminRoutes } from './routes.js';
export { ApiKey, isScope } from './schemas.js';
