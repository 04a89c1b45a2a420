// A company's logo as it is kept: a data URL of a PNG or JPEG. Read by the portal's
// branding and by the printed lists.

export interface Logo { readonly type: string; readonly bytes: Buffer }

const LOGO = /^data:(image\/(?:png|jpeg));base64,([A-Za-z0-9+/]+={0,2})$/;

/** A stored logo as bytes: a data URL of a PNG or JPEG; anything else is no logo. */
export function logoOf(stored: string | null): Logo | null {
  const m = stored ? LOGO.exec(stored) : null;
  return m ? { type: m[1]!, bytes: Buffer.from(m[2]!, 'base64') } : null;
}
