// The events area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { checkUrl, type UrlRules } from './addresses.js';
export { SUBSCRIBABLE_EVENTS } from './catalogue.js';
export { consume, consumerBacklog, ensureConsumers, type EventHandler, type OutboxEvent } from './consumers.js';
export { pruneEventsBefore, redactEventsMentioning } from './keeping.js';
export { mayLeave, mayLeaveWhere, sentGpc } from './may-leave.js';
export { type ChangeStatement, changeAndEmit, changeStatement, emit, emitMany, type EventToEmit } from './outbox.js';
export { attemptOutcome, claimDueAttempts, firstAttempt, givenUp, heldAttempt, type HeldAttempt, releaseAttempt } from './queue.js';
export { eventIdsBefore, eventPayload, eventPayloads } from './repository.js';
export { failingTooLong } from './retry-policy.js';
export { eventRoutes } from './routes.js';
export { type Resolve, send, type SendResult, systemResolve } from './send.js';
