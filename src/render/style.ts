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
img{max-width:100%;height:auto}
.l-hero,.l-side{display:grid;gap:1.5rem;align-items:center}.l-hero h2{font-size:clamp(1.5rem,4vw,2rem);margin-top:0}.l-hero .button{margin-top:.5rem}
.l-img img{display:block;width:100%;border-radius:12px}
@media (min-width:46rem){.l-hero:not(.no-img),.l-side:not(.no-img){grid-template-columns:1fr 1fr}.img-right .l-img{order:2}}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(13rem,1fr));gap:1rem;list-style:none;padding:0}
.card{border:1px solid #e5e7eb;border-radius:12px;padding:1rem}.card img{display:block;width:100%;border-radius:8px}.card h3{margin:.5rem 0 .25rem;font-size:1.1rem}
.faq details{border-bottom:1px solid #e5e7eb;padding:.75rem 0}.faq summary{cursor:pointer;font-weight:600}
.quote{margin:0;padding:1rem 1.25rem;border-left:4px solid #0b57d0}.quote blockquote{margin:0;font-size:1.15rem}
.quote figcaption{display:flex;gap:.75rem;align-items:center;margin-top:.75rem}.quote figcaption img{width:4rem;height:4rem;border-radius:50%;object-fit:cover}
.strip{display:flex;flex-wrap:wrap;gap:1.5rem 2rem;align-items:center;justify-content:center;list-style:none;padding:0}.strip img{display:block;max-height:3rem;width:auto;max-width:9rem}
.l-cta{text-align:center}.l-cta .actions{align-items:center}.l-cta .lead{text-align:left;width:100%}
.video{aspect-ratio:16/9;background:#111827;border-radius:12px;overflow:hidden}.video iframe{width:100%;height:100%;border:0}
.play{display:flex;flex-direction:column;gap:.75rem;align-items:center;justify-content:center;width:100%;height:100%;color:#fff;text-decoration:none;font-weight:600}
.tri{width:4rem;height:4rem;border-radius:50%;background:#b42318;clip-path:polygon(30% 20%,80% 50%,30% 80%)}
footer{border-top:1px solid #e5e7eb;margin-top:2rem;padding:1.5rem 0;color:#4b5563;font-size:.95rem}
footer .wrap{display:flex;flex-wrap:wrap;gap:2rem}footer h2{font-size:1rem;margin:0 0 .5rem}footer ul{list-style:none;padding:0;margin:0}`;
