// PDF's standard fonts (Helvetica and the others every reader has, embedding
// nothing) draw only the characters of the Windows-1252 ("WinAnsi") code page.
// Text bound for them passes through here first: a letter with an accent that
// code page lacks loses the accent (ő → o, Ł → L), anything else it cannot show becomes
// `?`, and control characters (line breaks included) become spaces — so no
// record's text can break a printed list, whatever its script.

/** The characters Windows-1252 gives to 0x80–0x9F (the rest of it is Latin-1's printable range). */
const EXTRA = '€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ';

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
