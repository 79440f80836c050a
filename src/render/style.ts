/** The default style, inline: readable, accessible contrast, no external fonts or CDNs. */
export const STYLE = `*,*::before,*::after{box-sizing:border-box}
body{margin:0;font:1.0625rem/1.6 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#fff}
a{color:#0b57d0}a:focus-visible,button:focus-visible,input:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
.wrap{max-width:77.5rem;margin:0 auto;padding:0 1.25rem}
main>*{--w:70ch;padding-inline:max(1.25rem,calc((100% - var(--w))/2))}main>.l-wide,main>.l-hero,main>.l-side{--w:75rem}
header.top{border-bottom:1px solid #e5e7eb}header.top .wrap{display:flex;justify-content:flex-end;padding-top:.75rem;padding-bottom:.75rem}
.hero{padding-block:3rem 1.5rem}h1{font-size:clamp(2rem,5vw,3.25rem);line-height:1.15;margin:0 0 .75rem}
.sub{font-size:1.25rem;color:#4b5563;margin:0}
section.s{padding-block:2rem}h2{font-size:clamp(1.4rem,3vw,1.9rem);line-height:1.25}.l-wide>h2,.l-wide>p{text-align:center}
.b-muted,.b-brand,.b-dark{padding-block:3.5rem}.b-muted{background:#f3f4f6}.b-brand{background:#0b57d0;color:#fff}.b-dark{background:#111827;color:#f9fafb}
.b-dark a:not(.button){color:#93c5fd}.b-brand a:not(.button){color:inherit}.b-brand .button,.b-brand button{background:#fff;color:#0b57d0}.b-brand .lead button{background:#0b57d0;color:#fff}
:is(.b-brand,.b-dark,.v-background) .sub{color:inherit}:is(.b-brand,.b-dark,.v-background) :is(.lead,.card,.plan){background:#fff;color:#1f2328}
code{background:#f3f4f6;padding:.1em .3em;border-radius:4px}
.actions{display:flex;flex-direction:column;gap:1.25rem;padding-block:1.5rem}
.button,button{display:inline-block;background:#0b57d0;color:#fff;border:0;border-radius:8px;padding:.7rem 1.2rem;font:inherit;font-weight:600;text-decoration:none;cursor:pointer;align-self:flex-start}
.lead{border:1px solid #e5e7eb;border-radius:12px;padding:1.25rem}.lead form{display:grid;gap:.75rem}
.lead label{display:grid;gap:.25rem;font-weight:600}.lead input{font:inherit;padding:.55rem .7rem;border:1px solid #9ca3af;border-radius:6px}
.lead input[aria-invalid=true]{border-color:#b42318}.lead .hp{position:absolute;left:-10000px;width:1px;height:1px;overflow:hidden}.err{color:#b42318;font-weight:400;font-size:.95rem}
.thanks{font-weight:600}
.widget{padding-block:1rem}.logos{display:flex;flex-wrap:wrap;gap:1.5rem;align-items:center;list-style:none;padding:0}.logos img{max-height:3rem;max-width:9rem}
img{max-width:100%;height:auto}
.l-hero,.l-side{display:grid;gap:1.5rem 3rem;align-items:center}.l-hero{padding-block:3.5rem}.l-hero h2{font-size:clamp(1.6rem,4vw,2.5rem);margin-top:0}.l-hero .button{margin-top:.5rem}.l-hero .sub{margin-bottom:1rem}
.l-img img{display:block;width:100%;border-radius:12px}.l-hero .l-img img{max-height:75vh;object-fit:cover}
@media (min-width:46rem){.l-hero:not(.no-img,.v-centered,.v-background),.l-side:not(.no-img){grid-template-columns:1fr 1fr}.img-right .l-img{order:2}}
.v-centered{text-align:center}.v-centered .l-text{max-width:70ch;margin:0 auto}.v-centered .button{align-self:center}.v-centered .l-img img{width:auto;max-height:min(50vh,30rem);margin:0 auto}
.v-background{position:relative;overflow:hidden;min-height:min(36rem,85vh);align-content:center;background:#111827;color:#fff}
.v-background .l-img{position:absolute;inset:0}.v-background .l-img img{width:100%;height:100%;max-height:none;object-fit:cover;border-radius:0}
.v-background .l-img::after{content:"";position:absolute;inset:0;background:rgb(17 24 39/.72)}.v-background .l-text{position:relative;z-index:1;max-width:42rem}.v-background a:not(.button){color:#fff}
.cards,.stats,.steps,.plans{display:grid;gap:1.25rem;list-style:none;padding:0;margin:1.5rem 0 0}
@media (min-width:40rem){:is(.cards,.stats,.steps,.plans):not(.g1){grid-template-columns:repeat(2,1fr)}}
@media (min-width:64rem){:is(.cards,.stats,.steps,.plans).g3{grid-template-columns:repeat(3,1fr)}:is(.cards,.stats,.steps,.plans).g4{grid-template-columns:repeat(4,1fr)}}
.stats{text-align:center}.stats strong{display:block;font-size:clamp(2rem,4vw,2.75rem);line-height:1.1}
.steps{counter-reset:step}.steps li{counter-increment:step}.steps li::before{content:counter(step);display:inline-grid;place-items:center;width:2.25rem;height:2.25rem;border-radius:50%;background:#0b57d0;color:#fff;font-weight:700}
.steps h3,.plan h3{margin:.6rem 0 .25rem;font-size:1.15rem}
.plan{border:1px solid #d1d5db;border-radius:12px;padding:1.5rem}.plan.hi{border:2px solid #0b57d0;box-shadow:0 6px 20px rgb(0 0 0/.08)}.g1{max-width:26rem;margin-inline:auto}
.b-muted :is(.card,.plan){background:#fff}.plan .button{margin-top:.75rem}.price strong{font-size:2rem}.plan ul{padding-left:1.2rem}.card .quote{border:0;padding:0}
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
