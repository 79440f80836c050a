// The render area's front door: what other areas may use of it. An import of another area's
// inner file fails `npm run lint` (scripts/check-doors.ts).
export { type Brand, brandCss, initialIcon } from './brand.js';
export { fillTokens, type TokenValues } from './content.js';
export { confirmationId, documentStyles, HONEYPOT, type LeadErrors, type LeadFields } from './document.js';
export { FONT_FILES, isSelfHosted } from './fonts.js';
export { attr, scriptJson } from './html.js';
export { fileSrc, render, type Rendered } from './rendered.js';
export { renderSections, type SectionContext, sectionImageIds } from './sections.js';
export { STYLE } from './style.js';
export { type ShownRows, titleOf, viewOf, type ViewOptions } from './view.js';
