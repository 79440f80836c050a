import { type BuiltIn, fixedId } from './built-in.js';

const access = fixedId('action', '4launchaccess');

/** A new product or a major release: what it is, what changes, proof, first questions, early access. */
export const productLaunch: BuiltIn = {
  templateId: fixedId('template', '4launch'),
  name: 'Product launch',
  description:
    'Announce a new product or a major release: why it exists, what it does, a word from an early customer, answers to first questions and an early-access form. Replace the words in [brackets].',
  content: {
    headline: 'Introducing [Product]: less busywork, more of the work that matters',
    subheadline: 'Everything your team needs to plan, track and report on its work, in one place. Set up in an afternoon, not a quarter.',
    sections: [
      {
        layout: 'text',
        heading: 'Why we built it',
        body: 'Teams kept telling us the same story: the work that matters gets buried under busywork. Copying data between tools, chasing status updates, rebuilding the same report every Monday.\n\n[Product] takes that busywork off your plate, so your team spends its week on the work customers notice.',
      },
      {
        layout: 'features',
        background: 'muted',
        heading: "What's inside",
        body: '',
        items: [
          {
            title: 'Set up in minutes',
            body: 'Connect the tools you already use and bring your data in with a few clicks. No consultants, no migration project.',
          },
          {
            title: 'Everything in one view',
            body: 'See the work, its owners and its deadlines side by side, so nobody has to ask for a status update again.',
          },
          {
            title: 'Automations that just run',
            body: 'Turn the steps you repeat every week into rules that run on their own. You hear about it only when something needs you.',
          },
          {
            title: 'Security built in',
            body: 'Single sign-on, roles and an audit log come standard, on every plan.',
          },
        ],
      },
      {
        layout: 'stats',
        heading: 'What early teams saw',
        body: '',
        items: [
          { value: '[3×]', title: 'faster weekly reporting' },
          { value: '[40%]', title: 'less time in status meetings' },
          { value: '[1 day]', title: 'from sign-up to first project' },
        ],
      },
      {
        layout: 'steps',
        background: 'muted',
        heading: 'Up and running in three steps',
        body: '',
        items: [
          { title: 'Connect your tools', body: 'Sign in with the tools you already use; your data comes across in minutes.' },
          { title: 'Invite your team', body: 'Everyone sees the work that matters to them from the first day.' },
          { title: 'Automate the busywork', body: 'Turn the steps you repeat every week into rules that run on their own.' },
        ],
      },
      {
        layout: 'quote',
        heading: '',
        body: 'We replaced three tools and a weekly status meeting in our first month. The team finally has its Fridays back.',
        author: '[Customer name]',
        role: '[Role], [Company]',
      },
      {
        layout: 'faq',
        heading: 'Questions, answered',
        body: '',
        items: [
          {
            title: 'Who is [Product] for?',
            body: 'Any team that runs recurring work across several tools: operations, marketing, customer success and more. If your week starts with a spreadsheet of status updates, it is for you.',
          },
          {
            title: 'How long does setup take?',
            body: 'Most teams are up and running the same day. Connect your tools, invite your team, and the onboarding checklist walks you through the rest.',
          },
          {
            title: 'What does it cost?',
            body: 'Early-access customers use [Product] free for 30 days, then pay per active user. There is no setup fee, and you can cancel at any time.',
          },
          {
            title: 'Is my data safe?',
            body: 'Your data is encrypted in transit and at rest, and you can export or delete it whenever you like.',
          },
        ],
      },
      {
        layout: 'cta',
        background: 'brand',
        heading: 'Be among the first to try it',
        body: 'Get early access and a personal walkthrough from our team.',
        actionId: access,
      },
    ],
  },
  actions: [{ actionId: access, purpose: 'early-access', buttonTitle: 'Get early access', actionType: 'form', url: '' }],
  headerActionId: access,
};
