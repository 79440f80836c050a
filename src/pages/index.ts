// The pages area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export type { StoredAction } from './actions.js';
export type { PreviewDraft } from './draft.js';
export type { PageStart } from './from-template.js';
export { livePage } from './live-page.js';
export { fullMetadata, mergeMetadata, parseMetadata } from './metadata.js';
export { previewLinks } from './preview-links.js';
export { PreviewVisit } from './preview-visit.js';
export {
  findPage,
  nextAudienceNumber,
  pageContent,
  type PageCopies,
  pageIdsAmong,
  pageNameOf,
  pageRowById,
  pageRowsByIds,
  toPage,
} from './repository.js';
export { pageRoutes } from './routes.js';
export {
  Action,
  Content,
  Flags,
  Metadata,
  MetadataOverridePatch,
  MetadataPartial,
  NullableContent,
  type Page,
  PageParams,
} from './schemas.js';
export { hasItems, ITEM_FIELDS, LAYOUTS, Section, type SectionItem } from './section-schema.js';
export { checkContent, checkContentSize, contentErrors, layoutErrors, layoutOf, MAX_CONTENT_BYTES, videoOf } from './sections.js';
