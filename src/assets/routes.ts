import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { AppError, notFound } from '../http/errors.js';
import { createOnce, fromBodyOrHeader, fromHeader, IdempotencyHeaders, replayIfKnown, sendOnce } from '../http/idempotency.js';
import { bytesResponses, ListEnvelope, NoContent, responses } from '../http/schemas.js';
import { IMAGE_TYPES } from '../db/enums.js';
import { type FileVariant, MAX_FILE_BYTES, inspectImage, sniffImageType, typeOfVariant, type UrlSigner, variantKey } from './files.js';
import { isRenditionName, renditionNames, renditionsOf } from './renditions.js';
import { createAsset, deleteAsset, findFile, getAsset, insertFile, listAssets, storeFileBytes, updateAsset } from './repository.js';
import {
  Asset,
  AssetCreate,
  AssetListQuery,
  AssetParams,
  AssetUpdate,
  DownloadQuery,
  FileInfo,
  FileParams,
  RenditionParams,
} from './schemas.js';
import type { FileStores } from './store.js';

export interface AssetContext {
  signer: UrlSigner;
  stores: FileStores;
}

const tags = ['assets'];
const extension = { tags, 'x-extension': true };
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The assets area, one plugin, listed in app.ts: signed downloads (outside /v0/, so without an API
 * key), uploads and assets. The route rules (API key, query parameters, dispatcher wake-ups) are
 * in src/http/route-rules.ts.
 */
export const assetRoutes: FastifyPluginAsyncTypebox<AssetContext> = async (app, context) => {
  await app.register(downloadRoutes, context);
  await app.register(fileUploadRoutes, context);
  await app.register(assetResourceRoutes, context);
};

/** `POST /v0/files`: raw image bytes in, file metadata out. Only this route reads image bodies (the parser stays in this plugin). */
const fileUploadRoutes: FastifyPluginAsyncTypebox<AssetContext> = async (app, { stores }) => {
  app.addContentTypeParser([...IMAGE_TYPES], { parseAs: 'buffer', bodyLimit: MAX_FILE_BYTES }, (_request, body, done) => done(null, body));

  app.post(
    '/v0/files',
    {
      bodyLimit: MAX_FILE_BYTES,
      schema: {
        headers: IdempotencyHeaders,
        ...extension,
        operationId: 'uploadFile',
        summary: 'Upload an image file (extension)',
        description: `The raw bytes as the body, with Content-Type ${IMAGE_TYPES.join(', ')}; at most 10 MiB. The bytes must really be of that type.`,
        response: responses({ 201: FileInfo }),
      },
    },
    async (request, reply) => {
      const declared = ((request.headers['content-type'] ?? '').split(';', 1)[0] ?? '').trim().toLowerCase();
      if (!Buffer.isBuffer(request.body)) {
        throw new AppError('unsupported_media_type', `Send the image bytes with Content-Type ${IMAGE_TYPES.join(', ')}`);
      }
      const bytes = request.body;
      if (bytes.length === 0)
        throw new AppError('validation_failed', 'The body is empty', [{ path: '', message: 'must be the image bytes' }]);
      const actual = sniffImageType(bytes);
      if (actual !== declared) {
        throw new AppError('validation_failed', `The bytes are not ${declared}${actual ? ` (they are ${actual})` : ''}`, [
          { path: '', message: `must be ${declared} bytes` },
        ]);
      }
      const image = await inspectImage(bytes);
      if (!image)
        throw new AppError('validation_failed', `The ${actual} image cannot be decoded`, [
          { path: '', message: 'must be a decodable image' },
        ]);
      const once = fromHeader(request);
      const replayed = await replayIfKnown<FileInfo>(app.db, once);
      if (replayed) return sendOnce(reply, replayed);
      const fileId = await storeFileBytes(stores, bytes, image);
      return sendOnce(
        reply,
        await createOnce(app.db, once, (trx) => insertFile(trx, stores, request.tenantId, fileId, actual, bytes, image)),
      );
    },
  );
};

/** Signed download links, served without an API key: the signature is the credential. */
const downloadRoutes: FastifyPluginAsyncTypebox<AssetContext> = async (app, { signer, stores }) => {
  const send = async (fileId: string, variant: FileVariant, query: DownloadQuery, reply: FastifyReply) => {
    const { expires, signature } = query;
    if (!signer.verify(fileId, variant, expires, signature))
      throw new AppError('forbidden', 'The link is invalid or has expired; get a fresh one from the asset');
    const file = await findFile(app.db, fileId);
    const contentType = file && typeOfVariant(file, variant);
    const bytes = file && contentType ? await stores.byName[file.store].get(variantKey(file.id, variant)) : undefined;
    if (!bytes || !contentType) throw notFound('File');
    const maxAge = Math.max(0, Number(expires) - Math.floor(Date.now() / 1000));
    return reply
      .header('content-type', contentType)
      .header('cache-control', `private, max-age=${maxAge}`)
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'")
      .header('content-disposition', 'inline')
      .send(bytes);
  };
  for (const variant of ['original', 'preview'] as const) {
    app.get(
      variant === 'original' ? '/files/:fileId' : '/files/:fileId/preview',
      {
        schema: {
          tags: ['assets'],
          operationId: variant === 'original' ? 'downloadFile' : 'downloadFilePreview',
          summary: variant === 'original' ? 'Download a file (signed link)' : "Download a file's preview (signed link)",
          security: [],
          params: FileParams,
          querystring: DownloadQuery,
          response: bytesResponses('The image, with its Content-Type', IMAGE_TYPES),
        },
      },
      (request, reply) => send(request.params.fileId, variant, request.query, reply),
    );
  }
  app.get(
    '/files/:fileId/:rendition',
    {
      schema: {
        tags: ['assets'],
        operationId: 'downloadFileRendition',
        summary: 'Download a file at another width or in WebP (signed link)',
        security: [],
        params: RenditionParams,
        querystring: DownloadQuery,
        response: bytesResponses('The image, with its Content-Type', IMAGE_TYPES),
      },
    },
    (request, reply) => {
      const { fileId, rendition } = request.params;
      if (!isRenditionName(rendition)) throw notFound('File');
      return send(fileId, rendition, request.query, reply);
    },
  );
};

const assetResourceRoutes: FastifyPluginAsyncTypebox<AssetContext> = async (app, { signer, stores }) => {
  app.post(
    '/v0/assets',
    {
      schema: {
        headers: IdempotencyHeaders,
        tags,
        operationId: 'createAsset',
        summary: 'Create asset',
        body: AssetCreate,
        response: responses({ 201: Asset }),
      },
    },
    async (request, reply) => {
      const { tenantId } = request;
      const result = await createOnce(
        app.db,
        fromBodyOrHeader(request, { tenantId, scope: 'asset', key: request.body.idempotencyKey, request: request.body, ttlMs: DAY_MS }),
        (trx) => createAsset(trx, tenantId, request.body, signer),
        // A replay shows the asset as it is now, with links that are valid from now.
        async (stored) => (await getAsset(app.db, tenantId, stored.assetId, signer)) ?? stored,
      );
      return sendOnce(reply, result);
    },
  );

  app.get(
    '/v0/assets',
    {
      schema: {
        tags,
        'x-extension': true,
        operationId: 'listAssets',
        summary: 'List assets (extension)',
        querystring: AssetListQuery,
        response: responses({ 200: ListEnvelope(Asset) }),
      },
    },
    async (request) => listAssets(app.db, request.tenantId, request.query, signer),
  );

  app.get(
    '/v0/assets/:asset_id',
    {
      schema: { tags, operationId: 'getAsset', summary: 'Get asset', params: AssetParams, response: responses({ 200: Asset }) },
    },
    async (request) => {
      const asset = await getAsset(app.db, request.tenantId, request.params.asset_id, signer);
      if (!asset) throw notFound('Asset');
      return asset;
    },
  );

  app.patch(
    '/v0/assets/:asset_id',
    {
      schema: {
        ...extension,
        operationId: 'updateAsset',
        summary: 'Update, trash or restore an asset (extension)',
        params: AssetParams,
        body: AssetUpdate,
        response: responses({ 200: Asset }),
      },
    },
    async (request) => {
      const asset = await app.db
        .transaction()
        .execute((trx) => updateAsset(trx, request.tenantId, request.params.asset_id, request.body, signer));
      if (!asset) throw notFound('Asset');
      return asset;
    },
  );

  app.delete(
    '/v0/assets/:asset_id',
    {
      schema: {
        ...extension,
        operationId: 'deleteAsset',
        summary: 'Delete an asset (extension)',
        params: AssetParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (request, reply) => {
      const result = await app.db.transaction().execute((trx) => deleteAsset(trx, request.tenantId, request.params.asset_id, signer));
      if (!result) throw notFound('Asset');
      if (result.removeFile) {
        // After the commit: a crash in between leaves unreferenced bytes, never a live file without them.
        const store = stores.byName[result.removeFile.store];
        const file = result.removeFile;
        for (const variant of ['original', 'preview', ...renditionNames(renditionsOf(file))] as const)
          await store.delete(variantKey(file.id, variant));
      }
      return reply.code(204).send(null);
    },
  );
};
