// The API reference as one HTML page: the OpenAPI document and Redoc's standalone
// renderer inlined, so the page loads nothing from anywhere (served at /docs, written
// to docs/api-reference.html by `npm run docs`, and readable from a file offline).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** Redoc's options: the look a reader expects, and nothing that would reach the network. */
const OPTIONS = {
  expandResponses: '200,201',
  pathInMiddlePanel: true,
  sortPropsAlphabetically: false,
  hideHostname: false,
  downloadFileName: 'openapi.json',
  theme: { typography: { fontFamily: 'system-ui, sans-serif', headings: { fontFamily: 'system-ui, sans-serif' } } },
};

/**
 * The one thing Redoc fetches by itself, its logo beside "API docs by Redocly" at the
 * foot of the menu, becomes an empty image: Redoc then leaves the logo out and keeps the words.
 */
const LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

/**
 * What the page may load: its own inline scripts and styles, data: images and fonts,
 * and the search index's worker Redoc makes from a blob. Nothing from a network.
 */
const POLICY = "default-src 'none'; script-src 'unsafe-inline' blob:; worker-src blob:; style-src 'unsafe-inline'; img-src data: blob:; font-src data:";

let renderer: string | undefined;
/** Redoc's standalone bundle (read once per process; it is the same for every page). */
function redocBundle(): string {
  renderer ??= readFileSync(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'), 'utf8').replaceAll(LOGO, 'data:,');
  return renderer;
}

/**
 * Text that may stand inside a <script> element: nothing in it can close the element
 * or open an HTML comment there. Both forms occur only in the bundle's strings and
 * regular expressions, where `<\/` and `<\!` mean what `</` and `<!` do.
 */
const inScript = (code: string) => code.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');

/** JSON as a script's literal: `<` escaped, so no string in the document can end the element. */
const jsonLiteral = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** The whole page for an OpenAPI document. */
export function referencePage(document: Readonly<Record<string, unknown>>): string {
  const info = document.info as { readonly title?: unknown } | undefined;
  const title = typeof info?.title === 'string' ? info.title : 'API';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${POLICY}">
<title>${escapeHtml(title)} — API reference</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<div id="reference"></div>
<script>${inScript(redocBundle())}</script>
<script>Redoc.init(${jsonLiteral(document)}, ${jsonLiteral(OPTIONS)}, document.getElementById('reference'));</script>
</body>
</html>
`;
}
