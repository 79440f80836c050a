// The assets area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { type BackfillTuning, createRenditionsBackfill } from './backfill.js';
export { fileUrlSecret, type FileVariant, keptKey, typeOfVariant, urlSigner, type UrlSigner, variantKey, variantSuffix } from './files.js';
export { isRenditionName } from './renditions.js';
export { findFile, findLiveImageAsset, findShownImage, findShownImages, type ShownImage } from './repository.js';
export { assetRoutes } from './routes.js';
export { fileStores, type FileStores } from './store.js';
