/**
 * The console's icon: a page with a person on it, in the console's blue. Inline here (not a
 * build output) so it is served even before `npm run build`; it has no script and no style
 * attribute, so the console's policy needs no exception for it.
 */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect x="4" y="2" width="24" height="28" rx="4" fill="#0b57d0"/>
<circle cx="16" cy="12" r="5" fill="#ffffff"/>
<path d="M8 26c0-5 3.6-8 8-8s8 3 8 8z" fill="#ffffff"/>
</svg>
`;
