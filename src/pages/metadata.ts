import type { Metadata, MetadataPartial } from './schemas.js';

const EMPTY: Metadata = {
  title: '',
  description: '',
  keywords: [],
  author: '',
  robots: [],
  canonicalUrl: '',
  ogTitle: '',
  ogDescription: '',
  ogImageUrl: '',
  ogImageFileId: '',
  ogImageAlt: '',
  ogSiteName: '',
  ogUrl: '',
  twitterTitle: '',
  twitterDescription: '',
  twitterImageUrl: '',
  twitterImageFileId: '',
  twitterImageAlt: '',
  twitterSite: '',
  twitterCreator: '',
  themeColor: '',
};

/** Stored metadata is partial; responses carry every field. Later layers win, field by field. */
export function fullMetadata(...layers: (MetadataPartial | null | undefined)[]): Metadata {
  return Object.assign({ ...EMPTY, keywords: [], robots: [] }, ...layers.filter(Boolean));
}

export function parseMetadata(json: string | null): MetadataPartial | null {
  return json === null ? null : (JSON.parse(json) as MetadataPartial);
}
