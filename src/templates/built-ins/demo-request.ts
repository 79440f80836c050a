import { type BuiltIn, fixedId } from './built-in.js';

const demo = fixedId('action', '1demorequest');

/** Interest into a sales conversation: what a demo covers, proof, the usual objections, a short form. */
export const demoRequest: BuiltIn = {
  templateId: fixedId('template', '1demo'),
  name: 'Demo request',
  description:
    'Turn interest into a sales conversation: why teams switch, what the demo covers, a word from a customer, answers to the usual doubts and a short request form. Replace the words in [brackets].',
  content: {
    headline: 'See [Product] in action',
    subheadline:
      'Book a 30-minute demo shaped around your team. We show you the workflows that matter to you and answer every question: no pressure, no generic slide deck.',
    sections: [
      {
        layout: 'text',
        heading: 'Why teams switch to [Product]',
        body: 'Most teams come to us after outgrowing spreadsheets, or a tool that was never built for the way they work. [Product] gives them one place to plan, track and report, and then gets out of the way.',
      },
      {
        layout: 'features',
        background: 'muted',
        heading: "What we'll cover",
        body: '',
        items: [
          {
            title: 'Your use case, live',
            body: "Tell us how your team works today and we'll show you the same workflow in [Product], with realistic data.",
          },
          {
            title: 'Setup and integrations',
            body: 'How [Product] connects to the tools you already use, and what a typical rollout looks like.',
          },
          {
            title: 'A price that fits',
            body: 'A clear price for the size of your team, and the plan that makes sense for where you are now.',
          },
        ],
      },
      {
        layout: 'steps',
        heading: 'How it works',
        body: '',
        items: [
          { title: 'Pick a time', body: 'Choose a 30-minute slot that suits you: the form takes a minute.' },
          { title: 'Tell us about your team', body: 'A few questions by email, so the demo shows your workflow, not a script.' },
          { title: 'See it live', body: 'A product expert walks you through [Product] and answers every question.' },
        ],
      },
      {
        layout: 'quote',
        heading: '',
        body: 'The demo was the most useful 30 minutes of our evaluation. They showed our workflow, not a script, and answered the security questions on the spot.',
        author: '[Customer name]',
        role: '[Role], [Company]',
      },
      {
        layout: 'faq',
        heading: 'Before you book',
        body: '',
        items: [
          {
            title: 'How long is the demo?',
            body: "30 minutes, questions included. If you need a deeper technical session, we'll set up a follow-up with an engineer.",
          },
          {
            title: 'Who should join?',
            body: "Whoever will use [Product] day to day, and whoever signs off on new tools. We're happy to run a second session for IT or security.",
          },
          {
            title: 'Do I need to prepare anything?',
            body: "No. If there's a workflow you'd like to see, mention it in the form and we'll build the demo around it.",
          },
          {
            title: 'Is there a free trial?',
            body: 'Yes. After the demo we can set up a 14-day trial with your own data, so your team can try it before you decide.',
          },
        ],
      },
      {
        layout: 'cta',
        background: 'brand',
        heading: 'Request your demo',
        body: "Leave your details and we'll reply within one business day with a few times that work.",
        actionId: demo,
      },
    ],
  },
  actions: [{ actionId: demo, purpose: 'demo', buttonTitle: 'Request a demo', actionType: 'form', url: '' }],
  headerActionId: demo,
};
