import { colord, extend } from 'colord';
import a11y from 'colord/plugins/a11y';

extend([a11y]);

/** WCAG 2 AA for normal text. */
export const MIN_CONTRAST = 4.5;
/** Buttons are drawn in the brand colour with white text (src/render/brand.ts). */
export const BUTTON_TEXT = '#ffffff';

/** The contrast ratio of two colours, floored to two decimals (so 4.499 never passes as 4.5). */
export const contrastOf = (a: string, b: string): number => colord(a).contrast(b);

export interface ContrastFailure {
  field: 'textColor' | 'backgroundColor' | 'brandColor';
  message: string;
}

/**
 * The colour pairs a visitor must read, checked on the settings as they would be after a PATCH.
 * A failing pair is named by the field the PATCH changed (the text colour when it changed both).
 */
export function contrastFailures(
  colors: { textColor: string; backgroundColor: string; brandColor: string },
  changed: ReadonlySet<string>,
): ContrastFailure[] {
  const failures: ContrastFailure[] = [];
  const body = contrastOf(colors.textColor, colors.backgroundColor);
  if (body < MIN_CONTRAST) {
    const field = changed.has('textColor') || !changed.has('backgroundColor') ? 'textColor' : 'backgroundColor';
    failures.push({ field, message: `contrast between textColor and backgroundColor is ${body}:1, below WCAG AA ${MIN_CONTRAST}:1` });
  }
  const button = contrastOf(BUTTON_TEXT, colors.brandColor);
  if (button < MIN_CONTRAST) {
    failures.push({
      field: 'brandColor',
      message: `contrast between the button text (${BUTTON_TEXT}) and brandColor is ${button}:1, below WCAG AA ${MIN_CONTRAST}:1`,
    });
  }
  return failures;
}
