import { type BuiltIn, fixedId } from './built-in.js';

const register = fixedId('action', '2webinarregister');

/** A webinar or an event: when, what people learn, who speaks, the practical questions, registration. */
export const webinar: BuiltIn = {
  templateId: fixedId('template', '2webinar'),
  name: 'Webinar or event',
  description:
    'Register people for a webinar or an event: when it is, what they will learn, who speaks, answers to practical questions and a registration form. Replace the words in [brackets].',
  content: {
    headline: 'Live webinar: [Your topic]',
    subheadline:
      "[Date], [time and time zone]. 45 minutes, with live questions and answers. Can't make it? Register anyway and we'll send you the recording.",
    sections: [
      {
        layout: 'features',
        background: 'muted',
        heading: "What you'll learn",
        body: '',
        items: [
          {
            title: 'The playbook, step by step',
            body: 'How the best teams organise the work, and the three changes that made the biggest difference.',
          },
          {
            title: 'Real numbers',
            body: 'Results from before and after, from teams who made the change, and how they measured them.',
          },
          {
            title: 'Mistakes to avoid',
            body: 'The pitfalls we see most often, and how to spot them early in your own team.',
          },
          {
            title: 'Your questions, answered live',
            body: "The last 15 minutes are open questions. Send yours when you register and we'll make sure to cover it.",
          },
        ],
      },
      {
        layout: 'text',
        heading: 'Who should attend',
        body: '- Team leads who spend more time reporting on the work than doing it\n- Operations managers looking for a process that repeats\n- Anyone working out how to grow a team without adding headcount',
      },
      {
        layout: 'steps',
        heading: 'How the 45 minutes run',
        body: '',
        items: [
          { title: 'The playbook (20 minutes)', body: 'The approach, step by step, with the examples behind it.' },
          { title: 'A team that did it (10 minutes)', body: '[Guest name] from [Company] on what changed, and what it took.' },
          {
            title: 'Your questions (15 minutes)',
            body: 'Live answers to the questions you send when you register, and to the ones you ask on the day.',
          },
        ],
      },
      {
        layout: 'quote',
        background: 'muted',
        heading: 'Your host',
        body: "I've helped more than a hundred teams through this change. In this session I'll share what works, and what I wish someone had told me at the start.",
        author: '[Speaker name]',
        role: '[Role], [Company]',
      },
      {
        layout: 'faq',
        heading: 'Good to know',
        body: '',
        items: [
          { title: 'Is it free?', body: 'Yes. The webinar is free to attend: register with your work email.' },
          {
            title: 'Will there be a recording?',
            body: 'Yes. Everyone who registers gets the recording and the slides by email the day after, whether or not they joined live.',
          },
          {
            title: 'How do I join?',
            body: "After you register we'll email you a link to join, and a reminder one hour before we start. Nothing to install: it runs in your browser.",
          },
          {
            title: 'Can I bring my team?',
            body: 'Please do. Ask each person to register, so they get the link and the recording too.',
          },
        ],
      },
      {
        layout: 'cta',
        background: 'brand',
        heading: 'Save your seat',
        body: "Seats for the live session are limited. Register now and we'll send the link to your inbox.",
        actionId: register,
      },
    ],
  },
  actions: [{ actionId: register, purpose: 'register', buttonTitle: 'Register for free', actionType: 'form', url: '' }],
  headerActionId: register,
};
