// Objects merged on the request path.
//
// On Node 20's V8, an object literal that spreads another object and has members of
// its own (`{ ...a, b }`, or `{ ...a }` given a member afterwards) gets a hidden class
// of its own every time. Those classes and their descriptors live until a full
// collection: a GET by id that merged its headers and values so promoted ~0.3 MB to
// the old generation per young collection, grew the young generation to its largest
// (32 MiB) and the old one by tens of MiB between full collections. Members added to
// a new empty object follow the shared transitions instead.

/** `{ ...a, ...b, … }`, built member by member. */
export function merged<A extends object, B extends object>(a: A, b: B): A & B;
export function merged<A extends object, B extends object, C extends object>(a: A, b: B, c: C): A & B & C;
export function merged(...parts: object[]): object {
  return Object.assign({}, ...parts) as object;
}
