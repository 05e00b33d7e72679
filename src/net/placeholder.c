/* placeholder: replaced by the protocol module */
int samsa_net_placeholder(void);
int
samsa_net_placeholder(void)
{
    return 0;
}
