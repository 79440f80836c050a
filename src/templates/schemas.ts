import { Type, type Static } from '@sinclair/typebox';
import { RoundTrip } from '../http/round-trip.js';
import { ContentListQuery, Nullable } from '../http/schemas.js';
import { idPattern } from '../ids.js';
import { Action, Content } from '../pages/index.js';

export const TemplateId = Type.String({ minLength: 1, pattern: idPattern('template') });

/** Bounds of a saved template's words: a name like a person's (the reference's bounded name), a description like a subheadline's twice. */
export const MAX_NAME_LENGTH = 255;
export const MAX_DESCRIPTION_LENGTH = 1000;
const Name = Type.String({ minLength: 1, maxLength: MAX_NAME_LENGTH });
const Description = Type.String({ maxLength: MAX_DESCRIPTION_LENGTH, description: 'What the template is for, in words; default ""' });

const BuiltInNull = Nullable(Type.String({ format: 'date-time', description: 'null for a built-in' }));

export const Template = Type.Object(
  {
    templateId: TemplateId,
    name: Type.String(),
    description: Type.String(),
    builtIn: Type.Boolean({ description: "The service's own template: every tenant sees it, and nobody changes or deletes it (409)" }),
    content: Type.Object(Content.properties, { description: "The page's content a page made from the template starts with" }),
    actions: Type.Array(Action, {
      description:
        "The page's actions a page made from the template starts with; the page gets new actionIds, and its content's references follow",
    }),
    headerActionId: Type.Optional(Type.String({ description: 'One of `actions`: the header action of a page made from the template' })),
    createdAt: BuiltInNull,
    updatedAt: BuiltInNull,
  },
  { $id: 'Template' },
);
export type Template = Static<typeof Template>;

/**
 * A template as the list shows it (issue 45): every field of Template but `content`, which only
 * `?include=content` adds; GET /v0/templates/{template_id} has it always.
 */
export const TemplateSummary = Type.Object(
  {
    ...Type.Omit(Template, ['content']).properties,
    content: Type.Optional(
      Type.Object(Content.properties, { description: "Only with ?include=content: the template's content, as Template has it" }),
    ),
  },
  { $id: 'TemplateSummary', description: 'A template without its content (unless the list was asked to include it)' },
);
export type TemplateSummary = Static<typeof TemplateSummary>;

export const TemplateCreate = Type.Object(
  {
    pageId: Type.String({
      minLength: 1,
      maxLength: 64,
      description: 'A live page of the tenant: its content, actions and header action are copied',
    }),
    name: Name,
    description: Type.Optional(Description),
  },
  { additionalProperties: false, $id: 'TemplateCreate' },
);
export type TemplateCreate = Static<typeof TemplateCreate>;

/** Only the words change; the content and actions are the page's as saved (read-only): save a page again for new ones. */
export const TemplateUpdate = RoundTrip(
  Template,
  Type.Object(
    { name: Type.Optional(Name), description: Type.Optional(Description) },
    { additionalProperties: false, $id: 'TemplateUpdate' },
  ),
);
export type TemplateUpdate = Static<typeof TemplateUpdate>;

export const TemplateListQuery = ContentListQuery({});
export type TemplateListQuery = Static<typeof TemplateListQuery>;

export const TemplateParams = Type.Object({ template_id: TemplateId });
