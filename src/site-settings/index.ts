// The site-settings area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { defaultCountryOf, enrichmentOn, findShownImage, findSiteSettings } from './repository.js';
export { siteSettingsRoutes } from './routes.js';
