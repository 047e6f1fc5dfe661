import type { NextConfig } from 'next';

const nextConfig: NextConfig = {
  // The service is an API: no page needs React on the client, and no response should be cached.
  poweredByHeader: false,
  // Keep the provider SDKs as plain Node modules instead of bundling them.
  serverExternalPackages: ['@woocommerce/woocommerce-rest-api', 'stripe'],
};

export default nextConfig;
