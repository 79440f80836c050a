// The enrichment area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { isFreeMailDomain } from './free-mail.js';
export { companiesByNetwork } from './lookup.js';
export { type CountAnswer, httpProvider, type Provider } from './provider.js';
export { type Company, companyForVisit, type CompanyLookup } from './visit.js';
