// What Node itself can do here: node:http answering a precomputed Person-sized JSON body.
// No framework, no authentication, no database.
import http from 'node:http';

const port = Number(process.argv[2]);
const body = Buffer.from(
  process.argv[3] && process.argv[3] !== '{}'
    ? process.argv[3]
    : JSON.stringify({
        personId: 'person_01m81rf1hserzs2db0y98zrqh4',
        name: 'Jane Doe',
        email: 'jane.doe@example.com',
        domain: 'acme.com',
        slug: 'jane-doe',
        phoneNumber: '+14155550100',
        linkedinProfileUrl: null,
        createdAt: '2026-11-22T13:52:00.000Z',
        updatedAt: '2026-11-22T13:52:00.000Z',
      }),
);
http
  .createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  })
  .listen(port, '127.0.0.1');
