// Runs once (scripts/test.mjs): it reaches no database.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fillTokens, renderMarkdown, type TokenValues } from '../../src/render/content.js';

// The content's rendering: tokens filled, Markdown made safe HTML; no database needed.

const jane: TokenValues = { personName: 'Jane van Dijk', accountName: 'Acme', audienceName: 'Jane (acme.com)' };
const HOSTILE = '"><script>alert(1)</script>';

describe('fillTokens', () => {
  test('fills each token, with whitespace inside the braces', () => {
    assert.equal(
      fillTokens('{{person.name}}|{{ person.firstName }}|{{account.name}}|{{  audience.name  }}', jane),
      'Jane van Dijk|Jane|Acme|Jane (acme.com)',
    );
  });

  test('a missing value renders its fallback, or nothing', () => {
    const none: TokenValues = { personName: null, accountName: undefined };
    assert.equal(fillTokens('Hello {{person.firstName | there}}!', none), 'Hello there!');
    assert.equal(fillTokens('For {{ account.name|your team }}.', none), 'For your team.');
    assert.equal(fillTokens('Hello {{person.name}}!', none), 'Hello !');
    assert.equal(fillTokens('{{audience.name | }}', {}), '');
    // Blank is missing too.
    assert.equal(fillTokens('{{person.firstName | friend}}', { personName: '   ' }), 'friend');
    assert.equal(fillTokens('{{account.name | x}}', { accountName: '' }), 'x');
    // A value present wins over the fallback.
    assert.equal(fillTokens('{{account.name | your team}}', jane), 'Acme');
  });

  test('unknown tokens render nothing, fallback or not; text that is no token stays', () => {
    assert.equal(fillTokens('a{{person.email}}b{{foo | bar}}c{{constructor}}d{{toString | x}}e{{__proto__}}f', jane), 'abcdef');
    assert.equal(fillTokens('{{ not a token }} {single} {{}} {{person.name', jane), '{{ not a token }} {single} {{}} {{person.name');
    assert.equal(fillTokens('{{Person.Name}}', jane), '');
  });

  test('the first name is the first word, whatever the spacing', () => {
    assert.equal(fillTokens('{{person.firstName}}', { personName: '  Jean-Luc\t Picard ' }), 'Jean-Luc');
    assert.equal(fillTokens('{{person.firstName}}', { personName: 'Cher' }), 'Cher');
  });

  test('a value is never filled again (one pass), and values come back as given, unescaped', () => {
    const values: TokenValues = { personName: '{{account.name}}', accountName: HOSTILE, audienceName: '$& $1 $$' };
    assert.equal(fillTokens('{{person.name}}', values), '{{account.name}}');
    assert.equal(fillTokens('{{account.name}}', values), HOSTILE);
    // Replacement patterns in a value are not patterns.
    assert.equal(fillTokens('{{audience.name}}', values), '$& $1 $$');
  });

  test('nested tokens: the inner one is filled, the outer braces stay as written', () => {
    assert.equal(fillTokens('{{account.name | {{person.name}}}}', { personName: 'Jane' }), '{{account.name | Jane}}');
    assert.equal(fillTokens('{{{{person.name}}}}', { personName: 'Jane' }), '{{Jane}}');
  });

  test('text without tokens is returned as is, and a long one is handled quickly', () => {
    assert.equal(fillTokens('plain text', jane), 'plain text');
    const long = '{{'.repeat(10_000) + '{{ person.name |'.repeat(1000);
    const started = performance.now();
    assert.equal(fillTokens(long, jane), long);
    assert.ok(performance.now() - started < 500);
  });
});

describe('renderMarkdown', () => {
  test('paragraphs, emphasis, lists, headings, links and inline code', () => {
    const html = renderMarkdown(
      '## Plan\n\nHello *there*, **{{person.firstName}}**.\n\n- one\n- `code`\n\n1. first\n\n[Book](https://example.com/book?a=1&b=2)',
      jane,
    );
    assert.match(html, /<h2>Plan<\/h2>/);
    assert.match(html, /<p>Hello <em>there<\/em>, <strong>Jane<\/strong>\.<\/p>/);
    assert.match(html, /<ul>\n<li>one<\/li>\n<li><code>code<\/code><\/li>\n<\/ul>/);
    assert.match(html, /<ol>\n<li>first<\/li>\n<\/ol>/);
    assert.match(html, /<a href="https:\/\/example\.com\/book\?a=1&amp;b=2" rel="nofollow noopener">Book<\/a>/);
  });

  test('raw HTML is shown as text, never rendered', () => {
    const html = renderMarkdown(`<script>alert(1)</script>\n\nHi <img src=x onerror=alert(1)> there\n\n${HOSTILE}`, {});
    assert.doesNotMatch(html, /<script|<img/);
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;/);
    assert.match(html, /&quot;&gt;&lt;script&gt;/);
  });

  test('links only to http:, https: and mailto:, each nofollow noopener; others stay text', () => {
    const html = renderMarkdown(
      '[a](http://a.example) [b](HTTPS://b.example) [c](mailto:c@example.com) <https://d.example>\n\n' +
        '[x1](javascript:alert(1)) [x2](JaVaScRiPt:alert(1)) [x3](java\tscript:alert(1)) [x4](data:text/html,<b>) ' +
        '[x5](vbscript:x) [x6](/relative) [x7](#top) [x8](//evil.example) [x9](file:///etc/passwd) <javascript:alert(1)>',
      {},
    );
    assert.equal(html.match(/<a /g)?.length, 4);
    assert.equal(html.match(/rel="nofollow noopener"/g)?.length, 4);
    assert.doesNotMatch(html, /href="(?!https?:|mailto:)/i);
    assert.doesNotMatch(html, /<b>/);
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9]) assert.match(html, new RegExp(`\\[x${n}\\]\\(`));
  });

  test('a reference link to a hostile URL stays text too', () => {
    const html = renderMarkdown('[go][r]\n\n[r]: javascript:alert(1)', {});
    assert.doesNotMatch(html, /<a /);
  });

  test('images are shown as their alt text, escaped, never loaded', () => {
    const html = renderMarkdown('![<img src=x onerror=alert(1)> {{person.name}}](https://tracker.example/p.gif)', { personName: '<i>' });
    assert.doesNotMatch(html, /<img|<i>|tracker/);
    assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt; &lt;i&gt;/);
  });

  test('a hostile value stays literal text: never Markdown, never HTML', () => {
    const values: TokenValues = {
      personName: '*x* <b>bold</b> [l](javascript:alert(1))',
      accountName: HOSTILE,
      audienceName: '# heading\n\n- item',
    };
    const html = renderMarkdown('Hi {{person.name}}! {{account.name}}\n\n{{audience.name}}', values);
    assert.equal(
      html,
      '<p>Hi *x* &lt;b&gt;bold&lt;/b&gt; [l](javascript:alert(1))! &quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</p>\n' +
        '<p># heading\n\n- item</p>\n',
    );
  });

  test('tokens are filled in headings, emphasis, lists and link text, but not in URLs or code', () => {
    const html = renderMarkdown(
      '# For {{account.name}}\n\n- _{{ person.firstName | you }}_\n\n[Hi {{person.name}}](https://x.example/{{person.name}}) `{{person.name}}`',
      jane,
    );
    assert.match(html, /<h1>For Acme<\/h1>/);
    assert.match(html, /<li><em>Jane<\/em><\/li>/);
    assert.match(html, /<a href="https:\/\/x\.example\/%7B%7Bperson\.name%7D%7D" rel="nofollow noopener">Hi Jane van Dijk<\/a>/);
    assert.match(html, /<code>\{\{person\.name\}\}<\/code>/);
  });

  test('unknown and nested tokens in Markdown', () => {
    assert.equal(renderMarkdown('a {{evil.token}} b', jane), '<p>a  b</p>\n');
    assert.equal(
      renderMarkdown('{{account.name | {{person.name}}}}', { personName: '<Jane>' }),
      '<p>{{account.name | &lt;Jane&gt;}}</p>\n',
    );
  });

  test('empty and deeply nested input', () => {
    assert.equal(renderMarkdown('', jane), '');
    const deep = renderMarkdown(`${'>'.repeat(5000)} x\n\n${'['.repeat(5000)}`, {});
    assert.ok(deep.length > 0);
    const started = performance.now();
    renderMarkdown('*a **b '.repeat(2000) + '_'.repeat(20_000 - 14_000), {});
    assert.ok(performance.now() - started < 2000);
  });
});
