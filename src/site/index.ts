// The site area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { buildSite } from './app.js';
export { notModified } from './context.js';
export { openDoor } from './door.js';
export { pruneFormClaims } from './forms/leads.js';
export { siteHosts } from './hosts.js';
export { addressLimiter, takeFor } from './limits.js';
export { sourceOf } from './measure/source.js';
export { previewRenderer } from './preview.js';
export { chooseForVisit } from './serve/preview-visit.js';
export { describedVisit, looksUp, visitFacts, type VisitFacts } from './serve/visit.js';
