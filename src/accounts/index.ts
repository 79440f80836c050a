// The accounts area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export {
  accountExists,
  accountIdOfDomain,
  accountIdsAmong,
  accountNameOf,
  accountNameOfDomain,
  accountOfDomain,
  accountOfPerson,
  accountRowsOfDomains,
  noteAccountActivity,
} from './repository.js';
export { accountRoutes } from './routes.js';
export { AccountId, AccountParams } from './schemas.js';
