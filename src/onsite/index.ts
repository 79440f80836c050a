// The onsite area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { siteByKey, touchSiteSeen, snippetOf, type SiteRecord } from './sites-repository.js';
export { experienceChangesOfTenant, liveExperiencesOfSite, type LiveExperience } from './experiences-repository.js';
export { compileUrlMatch, conversionMatch, urlMatchSource, type UrlMatch } from './url-match.js';
export {
  CHANGE_ACTIONS,
  CHANGE_ATTRIBUTES,
  URL_ATTRIBUTES,
  filledUrlIsSafe,
  selectorProblem,
  urlValueProblem,
  type Change,
  type ChangeAttribute,
} from './changes.js';
export { experienceNames } from './measure/lookups.js';
export { onsiteMeasureRoutes } from './analytics-routes.js';
export { pruneExperienceViews } from './measure/store.js';
export { onsiteRoutes } from './routes.js';
export { snippetRoutes } from './snippet/routes.js';
export { toolRoutes } from './snippet/tool-routes.js';
