// Counts in plain English: "1 deal", "2 deals", "no deals" never reads "1 deals" or "deal(s)".

/** `count` and its noun, singular for exactly one: plural("deal", 2) is "2 deals"; an irregular plural is given. */
export function plural(noun: string, count: number, many = `${noun}s`): string {
  return `${count.toLocaleString('en')} ${count === 1 ? noun : many}`;
}
