import { useState } from 'preact/hooks';
import { api, must, once, succeeded, type Topic, type TopicEntry } from '../api.js';
import { LoadMore, Section, Status, useCursorList, WriteButton } from '../components.js';
import { ApiForm, Field } from '../form.js';

// Topics and their entries: create, edit and delete each. A topic's entries come with it.

function EntryForm({ topicId, entry, done }: { topicId: string; entry?: TopicEntry; done: () => void }) {
  const [type, setType] = useState(entry?.content.type ?? 'text');
  const [content, setContent] = useState(entry?.content.content ?? '');
  const submit = async () => {
    const body = { content: { type, content } };
    if (entry)
      must(
        await api.PATCH('/v0/topics/{topic_id}/entries/{topic_entry_id}', {
          params: { path: { topic_id: topicId, topic_entry_id: entry.topicEntryId } },
          body,
        }),
      );
    else {
      must(await api.POST('/v0/topics/{topic_id}/entries', { params: { path: { topic_id: topicId }, header: once() }, body }));
      setContent('');
    }
    done();
  };
  return (
    <ApiForm label={entry ? `Entry ${entry.sortOrder}` : 'New entry'} submitLabel={entry ? 'Save' : 'Add entry'} onSubmit={submit}>
      <Field name="type" label="Kind of entry" pointer="/content/type" value={type} onInput={setType} maxLength={255} />
      <Field kind="textarea" name="content" label="Entry text" pointer="/content/content" value={content} onInput={setContent} />
    </ApiForm>
  );
}

function TopicCard({ topic, changed }: { topic: Topic; changed: () => void }) {
  const [title, setTitle] = useState(topic.title);
  const [purpose, setPurpose] = useState(topic.purpose ?? '');
  const path = { topic_id: topic.topicId };
  return (
    <li data-topic={topic.topicId}>
      <h3>
        {topic.title} {topic.isDefault && <span class="muted small">default</span>}
      </h3>
      <ApiForm
        label={`Topic ${topic.title}`}
        onSubmit={async () => {
          must(await api.PATCH('/v0/topics/{topic_id}', { params: { path }, body: { title, purpose: purpose || null } }));
          changed();
        }}
      >
        <Field name="title" label="Topic name" value={title} onInput={setTitle} maxLength={255} />
        <Field name="purpose" label="What the topic is for" value={purpose} onInput={setPurpose} maxLength={1000} />
      </ApiForm>
      <WriteButton
        label="Delete"
        name={`Delete topic ${topic.title}`}
        kind="danger"
        confirm={`Delete the topic ${topic.title} and its entries?`}
        action={async () => succeeded(await api.DELETE('/v0/topics/{topic_id}', { params: { path } }))}
        done={changed}
      />
      <h4>Entries</h4>
      <ol class="entries">
        {topic.entries.map((e) => (
          <li key={e.topicEntryId}>
            <EntryForm topicId={topic.topicId} entry={e} done={changed} />
            <WriteButton
              label="Delete"
              name={`Delete entry ${e.sortOrder} of ${topic.title}`}
              kind="danger"
              confirm="Delete this entry?"
              action={async () =>
                succeeded(
                  await api.DELETE('/v0/topics/{topic_id}/entries/{topic_entry_id}', {
                    params: { path: { ...path, topic_entry_id: e.topicEntryId } },
                  }),
                )
              }
              done={changed}
            />
          </li>
        ))}
      </ol>
      <EntryForm topicId={topic.topicId} done={changed} />
    </li>
  );
}

export function TopicsView() {
  const topics = useCursorList(
    async (cursor) => must(await api.GET('/v0/topics', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } })),
    [],
  );
  const [title, setTitle] = useState('');
  return (
    <Section title="Topics">
      <ApiForm
        label="New topic"
        submitLabel="Create topic"
        onSubmit={async () => {
          must(await api.POST('/v0/topics', { params: { header: once() }, body: { title } }));
          setTitle('');
          topics.reload();
        }}
      >
        <Field name="title" label="Topic name" value={title} onInput={setTitle} maxLength={255} />
      </ApiForm>
      <Status loaded={topics}>
        <ul class="cards">
          {topics.items.map((t) => (
            <TopicCard key={`${t.topicId}-${t.updatedAt}-${t.entries.length}`} topic={t} changed={topics.reload} />
          ))}
        </ul>
        <LoadMore list={topics} />
      </Status>
    </Section>
  );
}
