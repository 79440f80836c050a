// The audiences area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { archiveErased, eraseAudiencesOf, erasedRouteKey } from './erasure.js';
export {
  claimVersions,
  failGeneration,
  giveBackVersion,
  publishGenerations,
  retryVersionAt,
  startGenerations,
} from './generation.js';
export { labelGroups, MAX_GROUPS, topGroups } from './groups.js';
export { refreshPersonAudiences } from './names.js';
export { pageCopies } from './page-copies.js';
export {
  countRegenerated,
  forgetRegenerations,
  liveAudiencesAfter,
  liveAudiencesAmong,
  queueNewVersions,
  writtenAmong,
} from './regeneration.js';
export {
  audienceIdsAmong,
  audienceRowsByIds,
  audienceRulesOf,
  findAudience,
  findHomeAudience,
  findVersion,
  isAudienceOfPage,
  liveAudienceRules,
} from './repository.js';
export { audienceRoutes } from './routes.js';
export {
  checkRules,
  type CompiledRules,
  compileRules,
  type FieldValue,
  firstMatch,
  indexRules,
  matches,
  parseRules,
  Rules,
  RulesInput,
  type RulesIndex,
  rulesInWords,
} from './rules.js';
export { AUDIENCE_KINDS, type AudienceVersion } from './schemas.js';
export { moveVersion, publishWinner } from './publishing.js';
export { toVersion } from './version-row.js';
export { findPageVersion, versionStatuses } from './versions.js';
