import type { Static } from '@sinclair/typebox';
import { type FieldError, invalidField } from '../http/errors.js';
import { throwIfAny } from '../http/round-trip.js';
import { newId } from '../ids.js';
import type { Action, ActionPatch } from './schemas.js';

/** An action as stored; its `actionIndex` is its position, so it is never stored. */
export type StoredAction = Omit<Static<typeof Action>, 'actionIndex'>;

/** An https URL as written: a link button must go somewhere a visitor's browser opens safely. */
const isHttpsUrl = (url: string) => /^https:\/\//i.test(url) && Boolean(URL.parse(url)?.hostname);

/**
 * What an action of its type needs: a `link` a button title and an https URL; a `form` no URL (it
 * posts to the page itself, so none is stored); any other type a URL, as the reference has it.
 */
function actionErrors(item: ActionPatch, i: number): FieldError[] {
  const errors: FieldError[] = [];
  const at = (field: string, message: string) => errors.push({ path: `/actions/${i}/${field}`, message });
  if (item.actionType === 'form') return errors;
  if (item.actionType === 'link') {
    if (item.buttonTitle.trim() === '') at('buttonTitle', 'is required: a link action needs a button title');
    if (item.url === undefined) at('url', 'is required: a link action needs an https URL, like https://example.com/demo');
    else if (!isHttpsUrl(item.url)) at('url', 'must be an https URL, like https://example.com/demo');
  } else if (item.url === undefined) {
    at('url', 'is required');
  }
  return errors;
}

/**
 * The rules of a page's actions and its header action, on create (no stored actions) and update:
 * - an item with an `actionId` keeps that action, which must be one of the page's actions (once);
 * - an item without one is a new action with a new id;
 * - an item's `actionIndex` (sent back as read) must be its position;
 * - `headerActionId` null clears it; a string must name one of the resulting actions;
 * - leaving it out keeps the stored one, which must then still be among the resulting actions.
 */
export function resolveActions(
  stored: StoredAction[],
  storedHeader: string | null,
  input: ActionPatch[] | undefined,
  header: string | null | undefined,
): { actions: StoredAction[]; headerActionId: string | null } {
  let actions = stored;
  if (input !== undefined) {
    const known = new Set(stored.map((a) => a.actionId));
    const used = new Set<string>();
    actions = input.map((item, i) => {
      if (item.actionIndex !== undefined && item.actionIndex !== i) {
        throw invalidField(`/actions/${i}/actionIndex`, `is read-only: it must be the item's position in actions (${i})`);
      }
      if (item.actionId !== undefined && (!known.has(item.actionId) || used.has(item.actionId))) {
        throw invalidField(
          `/actions/${i}/actionId`,
          known.has(item.actionId) ? 'is used by another item of actions' : "is not one of the page's actions",
        );
      }
      const actionId = item.actionId ?? newId('action');
      used.add(actionId);
      const url = item.actionType === 'form' ? '' : (item.url ?? '');
      return { actionId, purpose: item.purpose, buttonTitle: item.buttonTitle, actionType: item.actionType, url };
    });
    throwIfAny(input.flatMap((item, i) => actionErrors(item, i)));
  }
  const headerActionId = header === undefined ? storedHeader : header;
  if (headerActionId !== null && !actions.some((a) => a.actionId === headerActionId)) {
    throw invalidField(
      '/headerActionId',
      header === undefined
        ? 'names an action this update removes; set headerActionId too'
        : "is not the actionId of one of the page's actions",
    );
  }
  return { actions, headerActionId };
}
