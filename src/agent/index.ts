// The agent area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { generatorFor } from './generators.js';
export { agentRoutes } from './routes.js';
export { type AgentTuning, createAgent } from './worker.js';
