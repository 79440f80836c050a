import sharp from 'sharp';

// Test data shared by several suites. Written out here from the issue texts, never imported from
// src, so a change in the service shows up as a failing test.

/** The webhook event catalogue, as the issue fixes it. */
export const EVENT_CATALOGUE = [
  'page.created',
  'page.updated',
  'page.deleted',
  'audience.created',
  'audience.updated',
  'audience.archived',
  'audience.restored',
  'audience_version.created',
  'audience_version.updated',
  'audience_version.status_changed',
  'page.version.published',
  'audience_session.created',
  'visit.started',
  'session.ended',
  'form.submitted',
  'form.enriched',
  'form.enrichment_failed',
  'asset.created',
  'asset.updated',
  'asset.deleted',
  'topic.created',
  'topic.updated',
  'topic.deleted',
  'topic_entry.created',
  'topic_entry.updated',
  'topic_entry.deleted',
  'person.created',
  'person.updated',
  'person.deleted',
  'person_log.created',
  'person_log.updated',
  'person_log.deleted',
  'account.created',
  'account.updated',
  'account.deleted',
  'account_log.created',
  'account_log.updated',
  'account_log.deleted',
  'page_link.created',
  'page_link.updated',
  'page_link.deleted',
  'tenant_domain.verified',
  'tenant_domain.released',
  'experiment.started',
  'experiment.concluded',
  'template.created',
  'template.deleted',
  'integration.failed',
  'deal.created',
  'deal.updated',
  'deal.deleted',
];

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';
export const IMAGE_MIME: Record<ImageFormat, string> = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' };

/** A real image of one colour. */
export async function makeImage(
  format: ImageFormat,
  width = 64,
  height = 48,
  rgb: [number, number, number] = [200, 30, 90],
): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: rgb[0], g: rgb[1], b: rgb[2] } } })
    [format]()
    .toBuffer();
}
