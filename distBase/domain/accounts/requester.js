// Who is making a request: the authenticated user and device, as every domain operation receives it.
export {};
