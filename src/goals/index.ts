// The goals area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { checkTargetPage, findGoal } from './repository.js';
export { goalRoutes } from './routes.js';
export { resolveTarget, type Target, targetFields } from './rules.js';
export { TargetFields, TargetInput } from './schemas.js';
export { GOAL_REACHED, occurrenceOf, VISITOR } from './sql.js';
