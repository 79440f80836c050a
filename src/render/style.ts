/** The default style, inline: readable, accessible contrast, no external fonts or CDNs. */
export const STYLE = `*,*::before,*::after{box-sizing:border-box}
body{margin:0;font:1.0625rem/1.6 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#fff}
a{color:#0b57d0}a:focus-visible,button:focus-visible,input:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
.wrap{max-width:46rem;margin:0 auto;padding:0 1.25rem}
header.top{border-bottom:1px solid #e5e7eb}header.top .wrap{display:flex;justify-content:flex-end;padding-top:.75rem;padding-bottom:.75rem}
.hero{padding:3rem 0 1.5rem}h1{font-size:clamp(1.75rem,5vw,2.5rem);line-height:1.2;margin:0 0 .75rem}
.sub{font-size:1.25rem;color:#4b5563;margin:0}
section.s{padding:1rem 0}h2{font-size:1.4rem;line-height:1.3}
code{background:#f3f4f6;padding:.1em .3em;border-radius:4px}
.actions{display:flex;flex-direction:column;gap:1.25rem;padding:1.5rem 0}
.button,button{display:inline-block;background:#0b57d0;color:#fff;border:0;border-radius:8px;padding:.7rem 1.2rem;font:inherit;font-weight:600;text-decoration:none;cursor:pointer;align-self:flex-start}
.lead{border:1px solid #e5e7eb;border-radius:12px;padding:1.25rem}.lead form{display:grid;gap:.75rem}
.lead label{display:grid;gap:.25rem;font-weight:600}.lead input{font:inherit;padding:.55rem .7rem;border:1px solid #9ca3af;border-radius:6px}
.lead input[aria-invalid=true]{border-color:#b42318}.lead .hp{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}.err{color:#b42318;font-weight:400;font-size:.95rem}
.thanks{font-weight:600}
.widget{padding:1rem 0}.logos{display:flex;flex-wrap:wrap;gap:1.5rem;align-items:center;list-style:none;padding:0}.logos img{max-height:3rem;max-width:9rem}
footer{border-top:1px solid #e5e7eb;margin-top:2rem;padding:1.5rem 0;color:#4b5563;font-size:.95rem}
footer .wrap{display:flex;flex-wrap:wrap;gap:2rem}footer h2{font-size:1rem;margin:0 0 .5rem}footer ul{list-style:none;padding:0;margin:0}`;
