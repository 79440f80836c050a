import { type BuiltIn, fixedId } from './built-in.js';

const trial = fixedId('action', '0pricingtrial');
const sales = fixedId('action', '0pricingsales');

/** Plans and prices: the figures that earn trust, the plans side by side, customers' words, the doubts answered. */
export const pricingPage: BuiltIn = {
  templateId: fixedId('template', '0pricing'),
  name: 'Pricing page',
  description:
    'Show your plans and prices: a few figures that earn trust, the plans side by side with the one most teams choose highlighted, what customers say, answers to the usual billing questions and a free-trial form. Replace the words in [brackets].',
  content: {
    headline: 'Simple pricing for [Product], for teams of every size',
    subheadline: 'Start free for 30 days. No credit card, no setup fee, and you can change plans or cancel at any time.',
    sections: [
      {
        layout: 'pricing',
        heading: 'Choose your plan',
        body: '',
        items: [
          {
            title: 'Starter',
            price: '[$0]',
            period: 'per user / month',
            body: '- Up to [5] users\n- [3] projects\n- Email support',
            actionId: trial,
          },
          {
            title: 'Team',
            price: '[$12]',
            period: 'per user / month',
            body: '- Unlimited users and projects\n- Automations and integrations\n- Priority support',
            actionId: trial,
            highlighted: true,
          },
          {
            title: 'Enterprise',
            price: '[Custom]',
            body: '- Single sign-on and audit log\n- A dedicated success manager\n- Invoicing and a custom contract',
            actionId: sales,
          },
        ],
      },
      {
        layout: 'stats',
        background: 'brand',
        heading: 'Trusted by growing teams',
        body: '',
        items: [
          { value: '[2,000+]', title: 'teams use [Product]' },
          { value: '[4.8/5]', title: 'average review score' },
          { value: '[99.9%]', title: 'uptime over the last year' },
        ],
      },
      {
        layout: 'testimonials',
        background: 'muted',
        heading: 'What customers say',
        body: '',
        items: [
          {
            body: 'We moved the whole team over in a week. The Team plan paid for itself in the first month.',
            author: '[Customer name]',
            role: '[Role], [Company]',
          },
          {
            body: 'Clear pricing, no surprises on the invoice, and support that answers within the hour.',
            author: '[Customer name]',
            role: '[Role], [Company]',
          },
          {
            body: 'Single sign-on and the audit log were what our security team needed to say yes.',
            author: '[Customer name]',
            role: '[Role], [Company]',
          },
        ],
      },
      {
        layout: 'faq',
        heading: 'Billing questions',
        body: '',
        items: [
          {
            title: 'What happens after the free trial?',
            body: 'You choose a plan and add a payment method. If you do nothing, your account simply pauses: nothing is charged.',
          },
          { title: 'Can I change plans later?', body: 'Yes, at any time. A change takes effect at once and the price is prorated.' },
          { title: 'Do you offer annual billing?', body: 'Yes: pay yearly and get [two months] free on every plan.' },
          { title: 'Which payment methods do you take?', body: 'Cards on every plan; Enterprise can also pay by invoice.' },
        ],
      },
      {
        layout: 'cta',
        background: 'dark',
        heading: 'Try [Product] free for 30 days',
        body: 'Everything in the Team plan, for your whole team. No credit card needed.',
        actionId: trial,
      },
    ],
  },
  actions: [
    { actionId: trial, purpose: 'free-trial', buttonTitle: 'Start your free trial', actionType: 'form', url: '' },
    { actionId: sales, purpose: 'talk-to-sales', buttonTitle: 'Talk to sales', actionType: 'form', url: '' },
  ],
  headerActionId: trial,
};
