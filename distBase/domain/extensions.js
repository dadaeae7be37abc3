/** No extensions: the bare machinery (each list empty). */
export function noExtensions() {
    return {
        indexers: [],
        commitListeners: [],
        consumers: [],
        unsigned: [],
        createRoom: [],
        stateEventChecks: [],
        aliasResolvers: [],
        userQueries: [],
        profileChanged: [],
        registered: [],
        renewalMailers: [],
        deactivated: [],
        deviceDeleting: [],
        devicesDeleted: [],
        deviceUpdated: [],
        syncProviders: [],
        syncDecorators: [],
        presenceSetters: [],
        eduHandlers: [],
        invalidationListeners: [],
        background: [],
    };
}
