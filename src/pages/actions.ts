import type { Static } from '@sinclair/typebox';
import { invalidField } from '../http/errors.js';
import { newId } from '../ids.js';
import type { Action, ActionPatch } from './schemas.js';

/** An action as stored; its `actionIndex` is its position, so it is never stored. */
export type StoredAction = Omit<Static<typeof Action>, 'actionIndex'>;

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
      return { actionId, purpose: item.purpose, buttonTitle: item.buttonTitle, actionType: item.actionType, url: item.url };
    });
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
