import { type BuiltIn, fixedId } from './built-in.js';

const meeting = fixedId('action', '3outreachmeeting');

/**
 * A page for one account and the people in it: every text greets the visitor and names the
 * company through tokens, each with a fallback that reads well for a visitor nobody knows.
 */
export const accountOutreach: BuiltIn = {
  templateId: fixedId('template', '3outreach'),
  name: 'Account-based outreach',
  description:
    "A page for one account and its people: it greets the visitor by first name, names their company, lays out a first 90 days together and books a meeting. Tokens fill in the person and the account; each falls back to words that read well for a visitor you don't know.",
  content: {
    headline: "Hi {{person.firstName | there}}, here's how we'd help {{account.name | your team}}",
    subheadline:
      "We put this page together for {{account.name | your team}}: what we've seen work at companies like yours, and what the first 90 days with us would look like.",
    sections: [
      {
        layout: 'text',
        heading: 'Why we reached out',
        body: "Companies like {{account.name | yours}} tend to come to us at the same moment: the team is growing faster than the processes behind it, and the tools that worked at fifty people start to creak at five hundred.\n\nIf that sounds familiar, the rest of this page is for you. If it doesn't, reply to our email and tell us what does. We'd rather learn than guess.",
      },
      {
        layout: 'steps',
        background: 'muted',
        heading: "What we'd do together in the first 90 days",
        body: '',
        items: [
          {
            title: 'Weeks 1–2: map what you have',
            body: 'We sit down with your team, map the tools and workflows {{account.name | you}} rely on today, and agree on one goal we can measure.',
          },
          {
            title: 'Weeks 3–6: launch with one team',
            body: 'We set up a first team end to end, with your data and your rules, so you see results before anyone else has to change how they work.',
          },
          {
            title: 'Weeks 7–12: roll out and measure',
            body: 'We bring what worked to the next teams and report progress against the goal we set together, every two weeks.',
          },
        ],
      },
      {
        layout: 'quote',
        heading: '',
        body: 'They understood our setup after one call and had our first team live in under a month. The rollout plan is the reason we signed.',
        author: '[Customer name]',
        role: '[Role], [Company in the same industry]',
      },
      {
        layout: 'faq',
        heading: 'Questions teams like {{account.name | yours}} usually ask',
        body: '',
        items: [
          {
            title: 'Will this work with the tools we already use?',
            body: 'Almost certainly. We connect to the common CRMs, data warehouses and messaging tools out of the box, and build anything else with you in the first two weeks.',
          },
          {
            title: 'Who from our side needs to be involved?',
            body: 'One project owner for a 30-minute check-in each week, and a few people from the first team during setup. We do the heavy lifting.',
          },
          {
            title: 'What does a pilot cost?',
            body: "The 90 days are a fixed-fee pilot, credited against your first year if you continue. We'll share the number on our call: it depends on the size of the first team.",
          },
        ],
      },
      {
        layout: 'cta',
        background: 'brand',
        heading: "Let's find 30 minutes, {{person.firstName | together}}",
        body: "Pick a time that suits you and we'll bring a first draft of the plan for {{account.name | your team}}. No slides, just your questions.",
        actionId: meeting,
      },
    ],
  },
  actions: [{ actionId: meeting, purpose: 'book-meeting', buttonTitle: 'Book a meeting', actionType: 'form', url: '' }],
  headerActionId: meeting,
};
