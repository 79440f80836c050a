import { parse, type Selector, stringify } from 'css-what';
import { type CompiledRules, compileRules, matches, type Rules } from '../../audiences/index.js';
import { armFor } from '../../experiments/index.js';
import { fillTokens } from '../../render/index.js';
import { looksUp, type VisitFacts } from '../../site/index.js';
import { type Change, filledUrlIsSafe, URL_ATTRIBUTES } from '../changes.js';
import type { DecisionArm } from '../decision-token.js';
import { compileUrlMatch, conversionMatch, type UrlMatch } from '../url-match.js';
import { NO_IMAGES, renderSection, type SectionImages, sectionHtml } from './section.js';

/** An experience as the decision reads it: a live one (`liveExperiencesOfSite`), or any one a preview forces. */
export interface Decidable {
  experienceId: string;
  urlMatch: UrlMatch;
  rules: Rules | null;
  priority: number;
  holdoutPercent: number;
  conversionUrl: string | null;
  changes: Change[];
}

/** An experience with what the decision compiles of it, once: as its site is kept (live-site.ts), or as a preview forces it. */
export type CompiledExperience<E extends Decidable = Decidable> = E & { compiled: Compiled };

/** A change as the script applies it: tokens filled, a section rendered to HTML. */
export type AppliedChange =
  | { selector: string; action: 'text'; value: string }
  | { selector: string; action: 'attribute'; attribute: string; value: string }
  | { selector: string; action: 'hide' }
  | { selector: string; action: 'section'; placement: 'before' | 'after'; html: string };

export interface DecidedExperience {
  experienceId: string;
  arm: DecisionArm['arm'];
  changes: AppliedChange[];
}

/** What is compiled of an experience: its patterns, its rules, what it reads and where it changes. */
interface Compiled {
  page: RegExp;
  conversion: RegExp | undefined;
  rules: CompiledRules | undefined;
  /** The fields its rules read and the visit tokens its changes use: the facts gathered for it. */
  reads: Set<string>;
  /** Whether a rule or a token reads `company.*`: only then is the provider asked. */
  company: boolean;
  /** Whether a rule or a token reads a fact that is looked up (site/ `looksUp`): only then is the decision's visit prepared. */
  looksUp: boolean;
  /** Its selectors, each as css-what writes it back: two experiences overlap when they share one. */
  selectors: Set<string>;
}

const TOKEN_NAME = /\{\{\s*([A-Za-z_][\w.-]*)/g;

/** A selector as css-what writes it back, its element names lowercased (HTML's are case-insensitive). */
function normalSelector(selector: string): string {
  try {
    const lowered = (tokens: Selector[]): Selector[] => tokens.map((t) => (t.type === 'tag' ? { ...t, name: t.name.toLowerCase() } : t));
    return stringify(parse(selector).map(lowered));
  } catch {
    return selector;
  }
}

export function compiled<E extends Decidable>(experience: E): CompiledExperience<E> {
  const rules = experience.rules ? compileRules(experience.rules) : undefined;
  const reads = new Set(rules?.fields ?? []);
  for (const name of JSON.stringify(experience.changes).matchAll(TOKEN_NAME)) reads.add(name[1] ?? '');
  return {
    ...experience,
    compiled: {
      page: compileUrlMatch(experience.urlMatch),
      conversion: experience.conversionUrl ? compileUrlMatch(conversionMatch(experience.conversionUrl)) : undefined,
      rules,
      reads,
      company: [...reads].some((f) => f.startsWith('company.')),
      looksUp: [...reads].some(looksUp),
      selectors: new Set(experience.changes.map((c) => normalSelector(c.selector))),
    },
  };
}

/** The live experiences whose page pattern matches `path`, and those whose conversionUrl does. */
export function experiencesAt(experiences: CompiledExperience[], path: string): { matching: CompiledExperience[]; converting: string[] } {
  return {
    matching: experiences.filter((e) => e.compiled.page.test(path)),
    converting: experiences.filter((e) => e.compiled.conversion?.test(path) === true).map((e) => e.experienceId),
  };
}

/** Whether any of `experiences` reads `company.*` (a rule or a token): only then is the provider asked. */
export const readsCompany = (experiences: CompiledExperience[]) => experiences.some((e) => e.compiled.company);

/**
 * The experiences a visit gets, of `matching` in the order they apply (highest priority first, as
 * `liveExperiencesOfSite` reads them): the first whose rules match, then every other matching one
 * that shares no selector with one already chosen (issue 48 §2: "two may both apply when their
 * selectors do not overlap"; overlap judged on the selectors as written, normalised, since the
 * page's elements are not known here).
 */
export async function chooseExperiences(
  matching: CompiledExperience[],
  facts: VisitFacts,
  company: boolean,
): Promise<CompiledExperience[]> {
  // Only a fact that is looked up is waited for: the rest are read from the request as asked.
  if (matching.some((e) => e.compiled.looksUp)) {
    const reads = new Set<string>();
    for (const e of matching) for (const f of e.compiled.reads) reads.add(f);
    await facts.prepare(reads, company);
  }
  const chosen: CompiledExperience[] = [];
  const taken = new Set<string>();
  for (const e of matching) {
    const { rules, selectors } = e.compiled;
    if (rules && !matches(rules, facts.value, facts.withheld)) continue;
    if ([...selectors].some((s) => taken.has(s))) continue;
    chosen.push(e);
    for (const s of selectors) taken.add(s);
  }
  return chosen;
}

/** The arm of a unit: a stable hash of (experienceId, unit) against the holdout share (experiments/assign.ts). */
export function armOf(experience: Decidable, unit: string): DecisionArm['arm'] {
  const held = Math.round(Math.min(90, Math.max(0, experience.holdoutPercent)) * 100);
  if (held === 0) return 'personalised';
  return armFor(experience.experienceId, unit, [
    { key: 'holdout', weight: held },
    { key: 'personalised', weight: 10_000 - held },
  ]) === 'holdout'
    ? 'holdout'
    : 'personalised';
}

/** An experience's changes for one visit: every token filled as text, sections rendered with their images. */
export function appliedChanges(changes: Change[], facts: VisitFacts, images: SectionImages = NO_IMAGES): AppliedChange[] {
  const values = { visit: facts.token };
  return changes.flatMap((c): AppliedChange[] => {
    switch (c.action) {
      case 'text':
        return [{ selector: c.selector, action: 'text', value: fillTokens(c.value, values) }];
      case 'attribute': {
        const value = fillTokens(c.value, values);
        // Checked when written, and again filled: a link that a value made unsafe is not changed.
        if (URL_ATTRIBUTES.includes(c.attribute) && !filledUrlIsSafe(value)) return [];
        return [{ selector: c.selector, action: 'attribute', attribute: c.attribute, value }];
      }
      case 'hide':
        return [{ selector: c.selector, action: 'hide' }];
      default:
        return [
          { selector: c.selector, action: 'section', placement: c.placement, html: sectionHtml(renderSection(c.value, values, images)) },
        ];
    }
  });
}
