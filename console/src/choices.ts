import { useState } from 'preact/hooks';
import { type Asset, api, must, once } from './api.js';
import { useLoad } from './components.js';
import { type Choice, searchLoaded } from './picker.js';

// What the console's pickers choose from, each read one way only: the tenant's images (also what
// an upload adds), pages, the purposes of their buttons, and accounts. A list the API cannot search
// by name is read once per picker (a few hundred at most) and searched here.

/** The image types the API takes, for a file input's `accept`. */
export const IMAGE_TYPES = 'image/png,image/jpeg,image/gif,image/webp';

/** At most this many of a list are read for a picker; a longer list is found by the API's own search. */
const READ_AT_MOST = 500;
const PAGE_SIZE = 100;

/** Follows a list's cursor, `PAGE_SIZE` at a time, up to `READ_AT_MOST` items. */
async function readAll<T>(read: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await read(cursor);
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor && items.length < READ_AT_MOST);
  return items;
}

const query = (cursor: string | undefined) => ({ limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) });

/**
 * One page of the tenant's images, newest first (every asset is an image, the API's only asset
 * type): the one reader of GET /v0/assets, for the pickers' list, the Assets view and its variants.
 */
export const readImagePage = async (filter: { limit: number; parentAssetId?: string }, cursor: string | undefined) =>
  must(await api.GET('/v0/assets', { params: { query: { ...filter, ...(cursor ? { cursor } : {}) } } }));

/** The tenant's images for a picker, read whole (up to `READ_AT_MOST`). */
export const readImages = (): Promise<Asset[]> => readAll((cursor) => readImagePage({ limit: PAGE_SIZE }, cursor));

/** The tenant's images for a view's image fields: the one loader of them (readImages). */
export const useImages = () => useLoad(readImages, []);

export const readPages = () => readAll(async (cursor) => must(await api.GET('/v0/pages', { params: { query: query(cursor) } })));

export const imageChoice = (a: Asset): Choice => ({ id: a.assetId, name: a.name, ...(a.purpose ? { detail: a.purpose } : {}) });

/**
 * Uploads an image (POST /v0/files with its bytes, then POST /v0/assets): the one way the console
 * adds one, from the Assets view or in place in the block editor.
 */
export async function uploadImage(file: File, fields: { name?: string; purpose: string; parentAssetId?: string }): Promise<Asset> {
  const stored = must(
    await api.POST('/v0/files', {
      params: { header: once() },
      body: file as never,
      bodySerializer: (body: unknown) => body as Blob,
      headers: { 'content-type': file.type },
    }),
  );
  const { name, purpose, parentAssetId } = fields;
  return must(
    await api.POST('/v0/assets', {
      params: { header: once() },
      body: {
        assetType: 'image',
        name: name || file.name.replace(/\.[a-z0-9]+$/i, ''),
        purpose,
        fileId: stored.fileId,
        ...(parentAssetId ? { parentAssetId } : {}),
      },
    }),
  );
}

/** Searches of one picker, kept for its life: its list is read once, when it is first opened. */
export function useSearch(load: () => Promise<Choice[]>) {
  const [search] = useState(() => searchLoaded(load));
  return search;
}

export const imageSearch = async () => (await readImages()).map(imageChoice);

export const pageSearch = async (): Promise<Choice[]> => (await readPages()).map((p) => ({ id: p.pageId, name: p.name, detail: p.status }));

/** The purposes of the pages' buttons (what a goal's or a funnel step's `actionPurpose` names), with the pages that have them. */
export async function purposeSearch(): Promise<Choice[]> {
  const on = new Map<string, string[]>();
  for (const page of await readPages())
    for (const action of page.actions) on.set(action.purpose, [...(on.get(action.purpose) ?? []), `${action.buttonTitle} on ${page.name}`]);
  return [...on].map(([purpose, where]) => ({ id: purpose, name: purpose, detail: where.slice(0, 3).join(', ') }));
}

/** Accounts by the API's own search (name or domain), up to 20. */
export async function accountSearch(text: string): Promise<Choice[]> {
  const found = must(await api.GET('/v0/accounts/search', { params: { query: { limit: 20, ...(text ? { query: text } : {}) } } }));
  return found.items.map((a) => ({ id: a.accountId, name: a.name, ...(a.domain ? { detail: a.domain } : {}) }));
}
