import type { NextConfig } from 'next';

const nextConfig: NextConfig = {
  // The service is an API: no page needs React on the client, and no response should be cached.
  poweredByHeader: false,
  // Every answer is a JSON body of a few hundred bytes: gzip on the Node thread cost about 5 % of the
  // server's CPU (bench profile: zlib and the compression middleware on every response) to save a few
  // hundred bytes. A host or a reverse proxy in front compresses when it is worth it (Vercel does).
  compress: false,
  // Keep the provider SDKs as plain Node modules instead of bundling them.
  serverExternalPackages: ['@woocommerce/woocommerce-rest-api', 'stripe'],
};

export default nextConfig;
