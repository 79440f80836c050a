/** One of a const list's values. */
export type OneOf<List extends readonly string[]> = List[number];
