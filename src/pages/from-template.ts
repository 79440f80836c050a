import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { type FieldError, invalidField } from '../http/errors.js';
import { throwIfAny } from '../http/round-trip.js';
import { newId } from '../ids.js';
import type { StoredAction } from './actions.js';
import type { ActionInput, Content, PageCreate } from './schemas.js';
import { checkContentSize } from './sections.js';

/** What a page made from a template starts with: the template's content, actions and header action. */
export interface PageStart {
  content: Content;
  actions: StoredAction[];
  headerActionId: string | null;
}

/**
 * A template of the tenant's, or a built-in, by id; undefined when there is none for this tenant.
 * The templates area's function (templates/repository.ts), handed in by app.ts: templates import
 * pages (a template is saved from a page), so pages import none of them.
 */
export type TemplateStarts = (db: Kysely<Database>, tenantId: string, templateId: string) => Promise<PageStart | undefined>;

/** What a create request starts the page with: its own fields, or its template's. */
export interface Beginning {
  content: Content | undefined;
  /** The actions the page already "has" before the request's: a template's, under their new ids. */
  known: StoredAction[];
  actions: ActionInput[] | undefined;
  headerActionId: string | null | undefined;
  /**
   * The content's errors as the request should hear them: a template's content was valid when it
   * was saved, but an image it names may have been deleted since; that is the template's fault,
   * named at `/templateId`, not at a `/content` the request never sent.
   */
  errorsOf(errors: FieldError[]): FieldError[];
}

/** The fields a template brings; a request that names a template leaves them out. */
const FROM_TEMPLATE = ['content', 'actions', 'headerActionId'] as const;

/**
 * Without `templateId`, the request's own content and actions. With one, the template's: each
 * action gets a new id (action ids are the page's own: a lead or a click names one), and the
 * content's and header's references to an action follow it to its new id.
 */
export async function beginning(db: Kysely<Database>, tenantId: string, input: PageCreate, starts: TemplateStarts): Promise<Beginning> {
  if (input.templateId === undefined) {
    return { content: input.content, known: [], actions: input.actions, headerActionId: input.headerActionId, errorsOf: (e) => e };
  }
  const errors: FieldError[] = FROM_TEMPLATE.filter((field) => input[field] !== undefined).map((field) => ({
    path: `/${field}`,
    message: 'comes from the template: leave it out with templateId, and change the page once it is made',
  }));
  throwIfAny(errors);
  const start = await starts(db, tenantId, input.templateId);
  if (!start) throw invalidField('/templateId', 'is not a template of this tenant or a built-in one');
  // A template saved before content was bounded may be larger: the request named it, not a content.
  checkContentSize(start.content, '/templateId', 'names a template whose content is');
  const renamed = new Map(start.actions.map((a) => [a.actionId, newId('action')]));
  const follow = (actionId: string) => renamed.get(actionId) ?? actionId;
  const known = start.actions.map((a) => ({ ...a, actionId: follow(a.actionId) }));
  return {
    content: {
      ...start.content,
      sections: start.content.sections.map((s) => {
        const section = s.actionId === undefined ? s : { ...s, actionId: follow(s.actionId) };
        // A pricing plan's button names an action too: it follows the action's new id.
        if (!s.items?.some((item) => item.actionId !== undefined)) return section;
        return {
          ...section,
          items: s.items.map((item) => (item.actionId === undefined ? item : { ...item, actionId: follow(item.actionId) })),
        };
      }),
    },
    known,
    // Sent as the page's own actions, so they pass the rules every action does.
    actions: known.map(({ actionId, purpose, buttonTitle, actionType, url }) => ({ actionId, purpose, buttonTitle, actionType, url })),
    headerActionId: start.headerActionId === null ? undefined : follow(start.headerActionId),
    errorsOf: (errors) =>
      errors.map((e) => ({ path: '/templateId', message: `names a template whose content no longer fits: ${e.path} ${e.message}` })),
  };
}
