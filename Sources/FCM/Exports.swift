// The client's API takes the MessageTarget a message goes to; `import FCM` brings it along.
@_exported import FCMTargets
