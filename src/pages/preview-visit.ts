import { Type, type Static } from '@sinclair/typebox';

const closed = { additionalProperties: false } as const;
/** A value as a served visit's URL could carry it; a token shows it only when it passes the value rule. */
const Value = Type.String({ minLength: 1, maxLength: 200 });
const Words = Type.String({ minLength: 1, maxLength: 200 });

/**
 * A visit described rather than made (issue 46): what a visitor's request would say of itself, so
 * a preview shows the segment's version that visit would get, its tokens filled. Every part is
 * optional: one left out is a visit that does not say it (a rule on it does not match, its token
 * takes its fallback).
 */
export const PreviewVisit = Type.Object(
  {
    utm: Type.Optional(
      Type.Object(
        {
          source: Type.Optional(Value),
          medium: Type.Optional(Value),
          campaign: Type.Optional(Value),
          term: Type.Optional(Value),
          content: Type.Optional(Value),
        },
        { ...closed, description: 'The `utm_*` parameters of the URL ({{utm.source}} …)' },
      ),
    ),
    query: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z0-9_-]{1,40}$' }), Value, {
        maxProperties: 20,
        additionalProperties: false,
        description: 'Other query parameters of the URL, by name ({{query.<name>}}); `utm_*` belong in `utm`',
      }),
    ),
    country: Type.Optional(
      Type.String({ pattern: '^[A-Z]{2}$', description: "The visitor's country, ISO 3166-1 alpha-2 ({{visitor.country}} shows its name)" }),
    ),
    device: Type.Optional(Type.Union([Type.Literal('desktop'), Type.Literal('mobile'), Type.Literal('tablet')])),
    company: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Words),
          domain: Type.Optional(Type.String({ minLength: 1, maxLength: 253 })),
          industry: Type.Optional(Words),
          employees: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000_000 })),
          country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$' })),
        },
        { ...closed, description: "The company behind the visitor's address, as enrichment would name it ({{company.*}})" },
      ),
    ),
  },
  {
    ...closed,
    $id: 'PreviewVisit',
    description:
      'Preview as this visit: the segment it matches is shown (else the home audience, else the page) with its tokens filled. Leave `audienceId` out: the visit chooses',
  },
);
export type PreviewVisit = Static<typeof PreviewVisit>;
