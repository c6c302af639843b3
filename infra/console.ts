/**
 * @module The web console of the stage (docs/console.md): the committed bundle in lib/console/build as a
 * static site (SST's StaticSite: an S3 bucket behind CloudFront), no build step. It calls the stage's API,
 * whose URL its link carries (`?api=`, see outputs.ts), with the API's auth: keys entered in the page sign
 * each request (a Nimbus user's on an `acl` stage, AWS keys on an `iam` one). The API answers CORS for this
 * site's origin (api.ts).
 */
export const consoleSite = new sst.aws.StaticSite("Console", {
  path: "lib/console/build",
  indexPage: "index.html",
  // Deployed under `sst dev` too: the files are built already, there is no dev server to start.
  dev: false,
});
