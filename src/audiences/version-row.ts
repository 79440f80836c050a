import type { AudienceVersionsTable } from '../db/types.js';
import type { Content } from '../pages/index.js';
import type { AudienceVersion } from './schemas.js';

/** A version's row as the API shows it. */
export function toVersion(row: AudienceVersionsTable): AudienceVersion {
  return {
    versionId: row.id,
    audienceId: row.audience_id,
    versionNumber: Number(row.version_number),
    status: row.status,
    isNewPageAgent: row.is_new_page_agent === 1,
    supplementaryContext: row.supplementary_context,
    content: row.content === null ? null : (JSON.parse(row.content) as Content),
    origin: row.origin,
    queueDurationMs: row.queue_duration_ms === null ? null : Number(row.queue_duration_ms),
    createdAt: row.created_at,
    becameDraftAt: row.became_draft_at,
    queuedAt: row.queued_at,
    publishedAt: row.published_at,
    cancelledAt: row.cancelled_at,
    obsoleteAt: row.obsolete_at,
    archivedAt: row.archived_at,
    failureReason: row.failure_reason,
  };
}
