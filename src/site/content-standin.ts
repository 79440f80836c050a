// TEMPORARY stand-in until part A's content field lands; deleted before the final commit.
export interface Content {
  headline: string;
  subheadline: string;
  sections: { heading: string; body: string }[];
}
export const defaultContent = (title: string): Content => ({ headline: title, subheadline: '', sections: [] });
