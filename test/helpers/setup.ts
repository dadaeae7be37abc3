// Runs before every test file: reflect-metadata for type-graphql's decorators.
import "reflect-metadata";
