// PDF's standard fonts (Helvetica and the others every reader has, embedding
// nothing) draw only the characters of the Windows-1252 ("WinAnsi") code page.
// Text bound for them passes through here first: a letter with an accent that
// code page lacks loses the accent (ő → o, Ł → L), anything else it cannot show becomes
// `?`, and control characters (line breaks included) become spaces — so no
// record's text can break a printed list, whatever its script.

/** The characters Windows-1252 gives to 0x80–0x9F, in byte order (\0: a byte it leaves unused); the rest is Latin-1's. */
const HIGH = '€\0‚ƒ„…†‡ˆ‰Š‹Œ\0Ž\0\0‘’“”•–—˜™š›œ\0žŸ';
const EXTRA = HIGH.replaceAll('\0', '');

function printable(c: string): boolean {
  const code = c.codePointAt(0)!;
  return (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || EXTRA.includes(c);
}

/** Letters whose accent is not a separable mark, spelled without it. */
const SPELLED: Readonly<Record<string, string>> = { Ł: 'L', ł: 'l', Đ: 'D', đ: 'd', Ħ: 'H', ħ: 'h', ı: 'i', Ŧ: 'T', ŧ: 't' };

function replacement(c: string): string {
  if (/\p{Cc}|\p{Zl}|\p{Zp}/u.test(c)) return ' ';
  if (SPELLED[c]) return SPELLED[c];
  const bare = c.normalize('NFKD').replace(/\p{M}/gu, '');
  return bare.length > 0 && [...bare].every(printable) ? bare : '?';
}

/** `text` with every character the standard fonts cannot draw replaced. */
export function winAnsi(text: string): string {
  const composed = text.normalize('NFC');
  // Most text needs nothing: one test of the whole string first.
  if (/^[\x20-\x7e]*$/.test(composed)) return composed;
  let out = '';
  for (const c of composed) out += printable(c) ? c : replacement(c);
  return out;
}

/**
 * Text that winAnsi returned as a PDF literal string of Windows-1252 bytes (each
 * character's code is the byte), parentheses and backslashes escaped.
 */
export function winAnsiLiteral(text: string): string {
  let out = '(';
  for (const c of text) {
    const code = c.codePointAt(0)!;
    const high = HIGH.indexOf(c);
    const byte = code < 0x20 ? 0x20 : code < 0x80 || (code > 0x9f && code <= 0xff) ? code : c !== '\0' && high >= 0 ? 0x80 + high : 0x3f;
    out += byte === 0x28 || byte === 0x29 || byte === 0x5c ? `\\${c}` : String.fromCharCode(byte);
  }
  return `${out})`;
}
