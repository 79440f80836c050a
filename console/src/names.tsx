import { useEffect, useState } from 'preact/hooks';
import { api, must } from './api.js';
import { href } from './router.js';

// Timelines show names, not ids (issue 46): an id a log's payload or an event holds is read once
// (per signed-in tab) and shown by its name, linked where the console has a view of it; the id
// stays in the element's title, for someone who also uses the API.

const ID = /^(person|account|page|deal|asset)_[0-9a-hjkmnp-tv-z]{26}$/;
type Kind = 'person' | 'account' | 'page' | 'deal' | 'asset';

const known = new Map<string, Promise<string | undefined>>();

async function read(kind: Kind, id: string): Promise<string | undefined> {
  switch (kind) {
    case 'person':
      return must(await api.GET('/v0/persons/{person_id}', { params: { path: { person_id: id } } })).name;
    case 'account':
      return must(await api.GET('/v0/accounts/{account_id}', { params: { path: { account_id: id } } })).name;
    case 'page':
      return must(await api.GET('/v0/pages/{page_id}', { params: { path: { page_id: id } } })).name;
    case 'deal':
      return must(await api.GET('/v0/deals/{deal_id}', { params: { path: { deal_id: id } } })).name;
    default:
      return must(await api.GET('/v0/assets/{asset_id}', { params: { path: { asset_id: id } } })).name;
  }
}

/** Whether a value is an id the console can name. */
export const isNamedId = (value: unknown): value is string => typeof value === 'string' && ID.test(value);

/** The name of an id (undefined while it is read, or when it is gone: the id is shown then). */
export function useName(id: string): string | undefined {
  const [name, setName] = useState<string>();
  useEffect(() => {
    const kind = ID.exec(id)?.[1] as Kind | undefined;
    if (!kind) return;
    let live = true;
    let reading = known.get(id);
    if (!reading) {
      reading = read(kind, id).catch(() => undefined);
      known.set(id, reading);
    }
    void reading.then((got) => live && setName(got));
    return () => {
      live = false;
    };
  }, [id]);
  return name;
}

const VIEWS: Partial<Record<Kind, 'persons' | 'accounts' | 'pages'>> = { person: 'persons', account: 'accounts', page: 'pages' };

/** An id shown by its name, linked to its view where there is one. */
export function Named({ id }: { id: string }) {
  const name = useName(id);
  const kind = ID.exec(id)?.[1] as Kind | undefined;
  const view = kind && VIEWS[kind];
  const text = name ?? id;
  return view ? (
    <a href={href(view, id)} title={id} data-id={id}>
      {text}
    </a>
  ) : (
    <span title={id} data-id={id}>
      {text}
    </span>
  );
}
