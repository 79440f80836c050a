import { useState } from 'preact/hooks';
import { api, type Asset, must, type Schema } from '../api.js';
import { useImages } from '../choices.js';
import { Section, Status, useLoad, When } from '../components.js';
import { ImageField } from '../image-field.js';
import { ApiForm, Field } from '../form.js';

// The tenant's brand (GET/PATCH /v0/site_settings): logo and favicon picked from the assets,
// colours, font, footer and privacy link. Every served page wears it from the next request. The
// API checks the colours' contrast and says which field falls short, beside that field.

type SiteSettings = Schema<'SiteSettings'>;
type Font = SiteSettings['font'];
const FONTS: readonly Font[] = [
  'system',
  'serif',
  'rounded',
  'mono',
  'inter',
  'source-sans-3',
  'ibm-plex-sans',
  'lora',
  'merriweather',
  'playfair-display',
];

const orNull = (value: string) => (value.trim() === '' ? null : value);

/** A colour as `#rrggbb`, typed (so the API's refusal of a wrong one is seen), with a swatch of it. */
function Colour({
  name,
  label,
  value,
  onInput,
  hint,
}: {
  name: string;
  label: string;
  value: string;
  onInput: (v: string) => void;
  hint: string;
}) {
  return (
    <div class="colour">
      <Field name={name} label={label} value={value} onInput={onInput} maxLength={7} hint={hint} />
      <span class="swatch" aria-hidden="true" style={{ background: /^#[0-9a-fA-F]{6}$/.test(value) ? value : 'transparent' }} />
    </div>
  );
}

function BrandForm({ settings, assets, saved }: { settings: SiteSettings; assets: Asset[] | undefined; saved: () => void }) {
  const [logoAssetId, setLogo] = useState(settings.logoAssetId ?? '');
  const [brandColor, setBrandColor] = useState(settings.brandColor);
  const [textColor, setTextColor] = useState(settings.textColor);
  const [backgroundColor, setBackgroundColor] = useState(settings.backgroundColor);
  const [font, setFont] = useState<Font>(settings.font);
  const [footerText, setFooterText] = useState(settings.footerText ?? '');
  const [privacyUrl, setPrivacyUrl] = useState(settings.privacyUrl ?? '');
  const [faviconAssetId, setFavicon] = useState(settings.faviconAssetId ?? '');
  const [defaultCountry, setCountry] = useState(settings.defaultCountry ?? '');
  const submit = async () => {
    must(
      await api.PATCH('/v0/site_settings', {
        body: {
          logoAssetId: orNull(logoAssetId),
          brandColor,
          textColor,
          backgroundColor,
          font,
          footerText: orNull(footerText),
          privacyUrl: orNull(privacyUrl),
          faviconAssetId: orNull(faviconAssetId),
          defaultCountry: orNull(defaultCountry),
        },
      }),
    );
    saved();
  };
  return (
    <ApiForm label="Brand" onSubmit={submit} notice="Saved: served pages show it from the next request.">
      <ImageField
        name="logoAssetId"
        label="Logo"
        value={logoAssetId}
        onInput={setLogo}
        images={assets}
        hint="Shown 40 px high in each page's header"
      />
      <Colour
        name="brandColor"
        label="Brand colour"
        value={brandColor}
        onInput={setBrandColor}
        hint="#rrggbb: buttons (white text on it) and links"
      />
      <Colour
        name="textColor"
        label="Text colour"
        value={textColor}
        onInput={setTextColor}
        hint="#rrggbb: at least 4.5:1 against the background colour"
      />
      <Colour name="backgroundColor" label="Background colour" value={backgroundColor} onInput={setBackgroundColor} hint="#rrggbb" />
      <Field
        kind="select"
        name="font"
        label="Font"
        value={font}
        onInput={(v) => setFont(v as Font)}
        options={FONTS}
        hint="system, serif, rounded and mono are the visitor's own fonts; the others are served by your domain"
      />
      <Field
        kind="textarea"
        name="footerText"
        label="Footer text"
        value={footerText}
        onInput={setFooterText}
        maxLength={2000}
        rows={3}
        hint="Markdown: text, emphasis, lists and links"
      />
      <Field
        kind="url"
        name="privacyUrl"
        label="Privacy policy address"
        value={privacyUrl}
        onInput={setPrivacyUrl}
        hint='Shown in the footer as "Privacy policy"'
      />
      <ImageField
        name="faviconAssetId"
        label="Tab icon"
        value={faviconAssetId}
        onInput={setFavicon}
        images={assets}
        hint="The browser tab's icon"
      />
      <Field
        name="defaultCountry"
        label="Country of phone numbers"
        value={defaultCountry}
        onInput={setCountry}
        maxLength={2}
        hint="Two letters, like US or GB: the country of phone numbers typed without a country code. Empty: such numbers are refused."
      />
    </ApiForm>
  );
}

export function BrandView() {
  const settings = useLoad(async () => must(await api.GET('/v0/site_settings')), []);
  const assets = useImages();
  return (
    <Section title="Brand">
      <p>Every served page wears these: a header with the logo, buttons and links in the brand colour, the footer and the favicon.</p>
      <Status loaded={settings}>
        {settings.data && (
          <>
            <p class="muted small">
              Last changed <When at={settings.data.updatedAt} />
            </p>
            <BrandForm settings={settings.data} assets={assets.data} saved={settings.reload} />
          </>
        )}
      </Status>
    </Section>
  );
}
