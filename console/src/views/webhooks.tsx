import { useState } from 'preact/hooks';
import { api, must, once } from '../api.js';
import { ListTable, Badge, Section, Status, useCursorList, useLoad, When, WriteButton } from '../components.js';
import { href } from '../router.js';
import { OpenButton } from '../form.js';
import { EditSubscription, NewSubscription } from './webhook-forms.js';

export function WebhooksView() {
  const subscriptions = useCursorList(
    async (cursor) => must(await api.GET('/v0/webhook_subscriptions', { params: { query: { limit: 50, ...(cursor ? { cursor } : {}) } } })),
    [],
  );
  const [adding, setAdding] = useState(false);
  return (
    <Section title="Webhook subscriptions">
      {adding ? <NewSubscription /> : <OpenButton label="New subscription" onClick={() => setAdding(true)} />}
      <ListTable
        list={subscriptions}
        empty="No subscriptions."
        columns={['URL', 'Events', 'Active', 'Created']}
        row={(s) => (
          <tr key={s.subscriptionId}>
            <td>
              <a href={href('webhooks', s.subscriptionId)}>{s.url}</a>
            </td>
            <td>{s.events.join(', ')}</td>
            <td>{s.active ? 'yes' : 'no'}</td>
            <td>
              <When at={s.createdAt} />
            </td>
          </tr>
        )}
      />
    </Section>
  );
}

export function SubscriptionView({ subscriptionId }: { subscriptionId: string }) {
  const path = { subscription_id: subscriptionId };
  const subscription = useLoad(
    async () => must(await api.GET('/v0/webhook_subscriptions/{subscription_id}', { params: { path } })),
    [subscriptionId],
  );
  const deliveries = useCursorList(
    async (cursor) =>
      must(
        await api.GET('/v0/webhook_subscriptions/{subscription_id}/deliveries', {
          params: { path, query: { limit: 50, ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [subscriptionId],
  );
  const [notice, setNotice] = useState('');
  const after = (message: string) => () => {
    setNotice(message);
    deliveries.reload();
  };
  return (
    <Status loaded={subscription}>
      {subscription.data && (
        <article>
          <p class="crumbs">
            <a href={href('webhooks')}>Webhooks</a> /
          </p>
          <h1>{subscription.data.url}</h1>
          <p class="muted">
            Events: {subscription.data.events.join(', ')} · <Badge value={subscription.data.active ? 'active' : 'paused'} />
          </p>
          <EditSubscription key={subscription.data.updatedAt} subscription={subscription.data} changed={subscription.reload} />
          <div class="actions">
            <WriteButton
              label="Send a test"
              action={async () =>
                must(await api.POST('/v0/webhook_subscriptions/{subscription_id}/test', { params: { path, header: once() }, body: {} }))
              }
              done={after('A webhook.test delivery was sent.')}
            />
            <output aria-live="polite">{notice}</output>
          </div>
          <Section title="Deliveries">
            <ListTable
              list={deliveries}
              empty="No deliveries yet."
              columns={['Event', 'Status', 'Attempts', 'Last answer', 'Last attempt', '']}
              row={(d) => (
                <tr key={d.deliveryId} data-delivery={d.deliveryId}>
                  <td>{d.eventType}</td>
                  <td>
                    <Badge value={d.status} />
                  </td>
                  <td class="num">{d.attempts}</td>
                  <td>{d.lastResponseStatus ?? d.lastError ?? '—'}</td>
                  <td>
                    <When at={d.lastAttemptAt} />
                  </td>
                  <td>
                    <WriteButton
                      label={`Retry ${d.eventType}`}
                      action={async () =>
                        must(
                          await api.POST('/v0/webhook_subscriptions/{subscription_id}/deliveries/{delivery_id}/retry', {
                            params: { path: { ...path, delivery_id: d.deliveryId }, header: once() },
                            body: {},
                          }),
                        )
                      }
                      done={after('The delivery was sent again.')}
                    />
                  </td>
                </tr>
              )}
            />
          </Section>
        </article>
      )}
    </Status>
  );
}
